package redact_test

import (
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/internal/redact"
)

func TestPrintable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, ünïcode", "plain text, ünïcode"},
		{"a\nb", `a\x0ab`},
		{"\x1b]0;t\x07\x1b[1m", `\x1b]0;t\x07\x1b[1m`},
		{"a\r\tb\x00\x7f", `a\r\tb\x00\x7f`},
		{"\u0085\u009b", `\x85\x9b`},
		{"\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u2028\u2029", `\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u2028\u2029`},
	} {
		if got := redact.Printable(c.in, false); got != c.want {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := redact.Printable("a\nb", true); got != "a\nb" {
		t.Errorf("newlines kept: %q", got)
	}
}

// BenchmarkLines: the manager redacts a report's whole log (at most 64
// KiB) on every failed report.
//
//	go test ./internal/redact/ -run '^$' -bench Lines
func BenchmarkLines(b *testing.B) {
	var log strings.Builder
	for log.Len() < 64<<10 {
		log.WriteString("[preflight] Running pre-flight checks password=hunter2 token: abcdef.0123456789abcdef https://u:p@h/x\n")
	}
	b.SetBytes(int64(log.Len()))
	for b.Loop() {
		redact.Lines(log.String())
	}
}
