package nodereport

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/base64"
	"strings"

	"github.com/nodeboot/nodeboot/internal/redact"
	"github.com/nodeboot/nodeboot/internal/shellscript"
)

//go:embed assets/nodeboot-report.sh
var source string

// script is the reporter as the node gets it: comment lines, which only its
// maintainers read, are left out of the bootstrap data (the one
// here-document in it has no '#' line). The shebang stays. redact()'s sed
// program is the table the manager redacts with (internal/redact), put in
// at its placeholder, so the two sides cannot drift apart.
var script = strings.Replace(shellscript.StripComments(source), redactionsPlaceholder, redact.Sed(), 1)

const redactionsPlaceholder = "@REDACTIONS@\n"

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
