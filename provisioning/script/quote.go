package script

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// quote makes s one single-quoted shell word. Inside single quotes the shell
// interprets nothing, so the only character to handle is the quote itself,
// which closes the quotes, adds an escaped quote and reopens them. NUL cannot
// be carried by any shell word; check refuses it before rendering.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// heredocDelim is a here-document delimiter that no line of body equals, so
// the body ends exactly where the renderer says. It is always quoted where it
// is used, which turns off every expansion inside the body.
func heredocDelim(body string) string {
	const base = "NODEBOOT_EOF"
	d := base
	for n := 1; hasLine(body, d); n++ {
		d = base + "_" + strconv.Itoa(n)
	}
	return d
}

// hasLine reports whether line is one of body's lines.
func hasLine(body, line string) bool {
	for rest := body; rest != ""; {
		l, after, _ := strings.Cut(rest, "\n")
		if l == line {
			return true
		}
		rest = after
	}
	return false
}

// textSafe reports whether content can travel verbatim in a quoted
// here-document: the shell adds a final newline to every body and cannot
// carry NUL, so anything else goes as base64.
func textSafe(content string) bool {
	return strings.HasSuffix(content, "\n") && !strings.Contains(content, "\x00")
}

// wrap64 is base64 of raw in 76-column lines, as base64(1) writes it, each
// line ending in a newline.
func wrap64(raw []byte) string {
	enc := base64.StdEncoding.EncodeToString(raw)
	var b strings.Builder
	b.Grow(len(enc) + len(enc)/76 + 1)
	for len(enc) > 76 {
		b.WriteString(enc[:76])
		b.WriteByte('\n')
		enc = enc[76:]
	}
	b.WriteString(enc)
	b.WriteByte('\n')
	return b.String()
}

// decode64 decodes base64 the way the Plan's Validate accepts it: line
// breaks and blanks aside.
func decode64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	return base64.StdEncoding.DecodeString(s)
}
