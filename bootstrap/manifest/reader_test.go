package manifest

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

// docs returns every document Documents passes on.
func docs(t testing.TB, in []byte) ([]string, error) {
	t.Helper()
	var out []string
	err := Documents(bytes.NewReader(in), func(raw []byte) error {
		out = append(out, string(raw))
		return nil
	})
	return out, err
}

// TestLastLineIsNeverDropped is the regression test for apimachinery's
// YAMLReader, which returns a document without its last line when that line
// has no newline and its length is a multiple of its 64 KiB buffer (a
// postKubeadmCommand vanished with exit 0).
func TestLastLineIsNeverDropped(t *testing.T) {
	for _, n := range []int{64<<10 - 1, 64 << 10, 64<<10 + 1, 128 << 10, 3 * 64 << 10} {
		line := "  - " + strings.Repeat("x", n-4)
		in := "kind: KubeadmConfig\npostKubeadmCommands:\n" + line
		got, err := docs(t, []byte(in))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if len(got) != 1 || got[0] != in {
			t.Fatalf("last line of %d bytes: got %d documents, %d bytes, want the input's %d", n, len(got), len(strings.Join(got, "")), len(in))
		}
	}
}

func utf16Bytes(s string, bigEndian bool) []byte {
	out := []byte{0xFF, 0xFE}
	if bigEndian {
		out = []byte{0xFE, 0xFF}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

func TestDocuments(t *testing.T) {
	const a, b = "kind: A\nx: 1\n", "kind: B\ny: \"ü😀\"\n"
	tests := []struct {
		name string
		in   []byte
		want []string // documents, when err is nil
		err  error
		msg  string
	}{
		{"separators", []byte("---\n" + a + "---\n" + b), []string{a, b}, nil, ""},
		{"separator with comment and CRLF", []byte(a + "--- # next\r\n" + b), []string{a, b}, nil, ""},
		{"blank documents skipped", []byte("---\n---\n" + a + "---\n# only a comment\n---\n"), []string{a}, nil, ""},
		{"end marker", []byte(a + "...\n" + b), []string{a, b}, nil, ""},
		{"end marker then separator", []byte(a + "...\n---\n" + b + "...\n"), []string{a, b}, nil, ""},
		{"UTF-8 BOM", append([]byte("\xEF\xBB\xBF"), a...), []string{a}, nil, ""},
		{"UTF-8 BOM per document", []byte(a + "\xEF\xBB\xBF---\n" + b), []string{a, b}, nil, ""},
		{"UTF-16LE", utf16Bytes(a+"---\n"+b, false), []string{a, b}, nil, ""},
		{"UTF-16BE", utf16Bytes(a+"---\n"+b, true), []string{a, b}, nil, ""},
		{"UTF-16 unpaired surrogate", append(utf16Bytes(a, false), 0x00, 0xD8, 'x', 0), nil, ErrEncoding, "unpaired high surrogate"},
		{"UTF-16 odd length", append(utf16Bytes(a, false), 'x'), nil, ErrEncoding, "odd number of bytes"},
		{"UTF-32", []byte{0xFF, 0xFE, 0, 0, 'k', 0, 0, 0}, nil, ErrEncoding, "UTF-32"},
		{"UTF-16 without BOM", []byte{'k', 0, 'i', 0}, nil, ErrEncoding, "without a byte-order mark"},
		{"text after separator", []byte(a + "--- |\n  x\n"), nil, ErrSyntax, "line 3: text after the document separator"},
		{"directive", []byte("%YAML 1.1\n---\n" + a), nil, ErrSyntax, "line 1: YAML directives"},
		{"CR line ends hide a document", []byte("kind: A\r---\rkind: B\r"), nil, ErrSyntax, "more than one YAML document"},
		{"duplicate key", []byte("kind: KubeadmConfig\nmetadata: {name: c}\nspec:\n  files:\n  - path: /a\n    path: /b\n"), nil, ErrDuplicateKey,
			"document 1: KubeadmConfig c: spec.files[0].path: duplicate key (lines 5 and 6)"},
		{"duplicate annotation", []byte("metadata:\n  annotations:\n    nodeboot.dev/strict: \"true\"\n    nodeboot.dev/strict: \"false\"\n"), nil, ErrDuplicateKey,
			`metadata.annotations["nodeboot.dev/strict"]: duplicate key`},
		{"merge key is not a duplicate", []byte("base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n"), []string{"base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n"}, nil, ""},
		{"alias inside the node it names", []byte("a: &x [1, *x]\n"), nil, ErrSyntax, "line 1: YAML alias *x refers to a node that contains it"},
		{"billion laughs", []byte(laughs(12)), nil, ErrTooLarge, "YAML aliases expand the document beyond"},
		{"syntax error names the input line", []byte(a + "---\nkind: B\n  bad: [\n"), nil, ErrSyntax, "document 2: line 5: mapping values are not allowed"},
		{"document too large", []byte("kind: A\ndata: " + strings.Repeat("x", MaxDocumentBytes) + "\n"), nil, ErrTooLarge, "larger than 8388608 bytes (MaxDocumentBytes)"},
		{"too many nodes", []byte("x: [" + strings.Repeat("1,", MaxDocumentNodes) + "1]\n"), nil, ErrTooLarge, "more than 524288 YAML nodes (MaxDocumentNodes), counted before parsing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := docs(t, tt.in)
			if tt.err == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") {
					t.Fatalf("documents %q, want %q", got, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want one matching %v", err, tt.err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %q, want it to contain %q", err, tt.msg)
			}
		})
	}
}

// laughs is the "billion laughs" document with n levels of tenfold aliases.
func laughs(n int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= n; i++ {
		p := "*l" + strconv.Itoa(i-1)
		b.WriteString("l" + strconv.Itoa(i) + ": &l" + strconv.Itoa(i) + " [" + strings.Repeat(p+", ", 9) + p + "]\n")
	}
	return b.String()
}
