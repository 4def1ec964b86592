package ignitionv3

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"testing"

	"github.com/vincent-petithory/dataurl"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// TestBase64WithBlanks: base64 content that Validate accepts (blanks and
// line breaks anywhere, as a wrapped or hand-indented value has them)
// renders, and reaches the config as the bytes it encodes.
func TestBase64WithBlanks(t *testing.T) {
	for _, enc := range []provisioning.Encoding{provisioning.EncodingBase64, provisioning.EncodingGzipBase64} {
		// "x\n", and the same gzipped.
		content := map[provisioning.Encoding]string{
			provisioning.EncodingBase64:     "eA o= ",
			provisioning.EncodingGzipBase64: "H4sIAAAA AAAAA6vg\tAgAfCOpG\r\nAgAAAA==\n",
		}[enc]
		p := &provisioning.Plan{
			Files:    []provisioning.File{{Path: "/etc/x", Encoding: enc, Content: content}},
			Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}},
		}
		if ps := p.Validate(); ps.Err() != nil {
			t.Fatalf("%s: Validate: %v", enc, ps.Err())
		}
		out, err := (&ignition.Renderer{}).Render(p, provisioning.Options{Version: "3.4.0"})
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		var cfg struct {
			Storage struct {
				Files []struct {
					Path     string
					Contents struct {
						Source      string
						Compression *string
					}
				}
			}
		}
		if err := json.Unmarshal(out.Data, &cfg); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range cfg.Storage.Files {
			if f.Path != "/etc/x" {
				continue
			}
			found = true
			got, err := dataurl.DecodeString(f.Contents.Source)
			if err == nil && f.Contents.Compression != nil && *f.Contents.Compression == "gzip" {
				var r *gzip.Reader
				if r, err = gzip.NewReader(bytes.NewReader(got.Data)); err == nil {
					got.Data, err = io.ReadAll(r)
				}
			}
			if err != nil || string(got.Data) != "x\n" {
				t.Errorf("%s: /etc/x holds %q (%v), want %q", enc, got.Data, err, "x\n")
			}
		}
		if !found {
			t.Errorf("%s: /etc/x is not in the config", enc)
		}
	}
}
