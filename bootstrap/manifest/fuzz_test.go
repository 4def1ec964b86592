package manifest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var classes = []error{ErrTooLarge, ErrEncoding, ErrSyntax, ErrDuplicateKey, ErrNotObject, ErrKind, ErrInvalid}

// FuzzDocuments: whatever the input, Documents and Parse return without
// panicking, every error belongs to a documented class, and a stream they
// accept loses no line: every line that is not a marker, blank or a comment
// is in some document.
func FuzzDocuments(f *testing.F) {
	for _, s := range []string{
		"kind: A\n---\nkind: B\n", "a: 1\n...\nb: 2", "\xEF\xBB\xBFa: 1\n", "\xFF\xFEa\x00:\x00 \x001\x00",
		"a: &x [1, *x]\n", "a: 1\na: 2\n", "--- |\n x\n", "%YAML 1.1\n---\na: 1\n", "a: 1\r---\rb: 2\r",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: s}\n",
		"apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: KubeadmConfig\nmetadata: {name: c}\n",
	} {
		f.Add([]byte(s))
	}
	if vectors, _ := filepath.Glob("/work/shared/cabpk-vectors/*/input.yaml"); len(vectors) > 0 {
		if b, err := os.ReadFile(vectors[0]); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var got [][]byte
		err := Documents(bytes.NewReader(in), func(raw []byte) error {
			got = append(got, raw)
			return nil
		})
		checkClass(t, err)
		if _, perr := Parse(bytes.NewReader(in)); perr != nil {
			checkClass(t, perr)
		}
		if err != nil || len(in) < 2 || in[0] == 0xFE || in[0] == 0xFF || in[0] == 0xEF {
			return
		}
		joined := bytes.Join(got, nil)
		for _, line := range strings.Split(string(in), "\n") {
			trim := strings.TrimSpace(line)
			if trim == "" || trim[0] == '#' || isMarker([]byte(line), "---") || isMarker([]byte(line), "...") || strings.HasPrefix(line, "\xEF\xBB\xBF") {
				continue
			}
			if !bytes.Contains(joined, []byte(line)) {
				// A document of comments only is rightly dropped.
				if strings.Contains(line, "#") {
					continue
				}
				t.Fatalf("line %q of an accepted input is in no document", line)
			}
		}
	})
}

func checkClass(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, c := range classes {
		if errors.Is(err, c) {
			return
		}
	}
	t.Fatalf("error of no documented class: %v", err)
}
