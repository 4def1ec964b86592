package redact

import (
	"fmt"
	"strings"
	"unicode"
)

// Printable replaces every control character (C0 but newlines when
// keepNewlines, DEL, C1) and every bidi control (U+061C, U+200E, U+200F,
// U+202A-U+202E, U+2066-U+2069) or line and paragraph separator with a
// visible escape (\x1b, \r, \u202e): a terminal showing an Event must not
// take orders from a node's output, nor a reader of a condition see other
// text than the text. Use it on anything a node wrote before it reaches a
// condition or an Event.
func Printable(s string, keepNewlines bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n' && keepNewlines:
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x100 && unicode.Is(unicode.Cc, r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
