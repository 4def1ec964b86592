package reporter

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/base64"

	"github.com/nodeboot/nodeboot/internal/shellscript"
)

//go:embed assets/nodeboot-report.sh
var source string

// script is the reporter as the node gets it: comment lines, which only its
// maintainers read, are left out of the bootstrap data (the one
// here-document in it has no '#' line). The shebang stays.
var script = shellscript.StripComments(source)

// Script returns the reporter program (assets/nodeboot-report.sh without its
// comment lines).
func Script() string { return script }

// gzipped is the script gzip-compressed and base64-encoded, for the targets
// that inflate files themselves; a fixed header keeps it deterministic.
var gzipped = func() string {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = w.Write([]byte(script))
	_ = w.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}()
