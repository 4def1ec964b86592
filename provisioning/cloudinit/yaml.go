package cloudinit

import (
	"strings"
	"unicode/utf8"

	yaml "gopkg.in/yaml.v3"
)

// CABPK's layout writes most values as YAML plain scalars. What cloud-init
// makes of them is what PyYAML (a YAML 1.1 loader) reads, which is not
// always what was written. This file classifies those readings once, for
// the hazard warnings and for the corrections; TestPlainReadingMatchesPyYAML
// checks it against PyYAML itself.

// reading is what cloud-init's YAML loader makes of a value written plain.
type reading int

const (
	// readsSame: the value, as a string.
	readsSame reading = iota
	// readsTyped: a number, boolean, null or collection instead of a string.
	readsTyped
	// readsChanged: a different string (a comment cut off, quotes removed).
	readsChanged
	// readsBroken: a YAML error; the document does not load at all.
	readsBroken
	// readsInjected: a line break; what follows is YAML of its own.
	readsInjected
)

// plainReading classifies s written as a plain scalar in block context: a
// mapping value ("key: s"), a sequence entry ("- s") or, with key, a
// mapping key ("s:"). why names the construct at fault, never the value.
func plainReading(s string, key bool) (r reading, why string) {
	if hasLineBreak(s) {
		return readsInjected, "a line break"
	}
	if !printable(s) {
		return readsBroken, "a control character, NUL or invalid UTF-8, which YAML does not allow"
	}
	switch {
	case strings.HasPrefix(s, "!"):
		tag, rest, _ := strings.Cut(s, " ")
		rest = strings.TrimLeft(rest, " ")
		switch {
		case tag == "!" && (rest == "" || rest[0] == '#'):
			return readsTyped, "a YAML null, not a string"
		case tag == "!!str" && (rest == "" || rest[0] == '#'):
			return readsChanged, "a YAML tag, which YAML removes"
		case tag == "!" || tag == "!!str" && !strings.ContainsAny(rest[:1], "[{"):
			if r, _ := plainReading(rest, false); r != readsBroken && r != readsInjected {
				return readsChanged, "a YAML tag, which YAML removes"
			}
		}
		// PyYAML's safe loader refuses tags it has no constructor for.
		return readsBroken, "a YAML tag"
	case !key && (s == "=" || strings.HasPrefix(s, "= ") && strings.TrimSpace(strings.SplitN(s[1:], "#", 2)[0]) == ""):
		// PyYAML resolves it to the "value" tag, which its safe loader
		// cannot construct.
		return readsBroken, "a lone '=', a YAML value key"
	case (s[0] == '|' || s[0] == '>') && !key:
		if rest := strings.TrimLeft(s[1:], " "); rest == "" || strings.HasPrefix(s[1:], " #") {
			return readsChanged, "a leading '" + s[:1] + "', which starts an empty YAML block"
		}
		return readsBroken, "a leading '" + s[:1] + "', which starts a YAML block"
	}
	if plainSafe(s) {
		// Before the tab checks, which cannot apply: plainSafe admits no
		// tab and no leading quote. Typed values (a mount's "0") take this
		// way on every render.
		if k := yamlKind(s); k != "string" && !(key && k == "value key") {
			return readsTyped, typedWhy(k)
		}
		return readsSame, ""
	}
	if (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == '\t' {
		return readsBroken, "a tab after a quoted value"
	}
	if pre, _, _ := strings.Cut(" "+s, " #"); strings.IndexByte(pre, '\t') >= 0 && s[0] != '\'' && s[0] != '"' {
		// PyYAML ends a plain scalar at a tab and then fails on it.
		return readsBroken, "a tab"
	}
	doc := "k: " + s + "\n"
	if key {
		doc = s + ":\n  k: v\n"
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil || len(n.Content) != 1 || n.Content[0].Kind != yaml.MappingNode || len(n.Content[0].Content) != 2 {
		return readsBroken, trouble(s)
	}
	v := n.Content[0].Content[1]
	if key {
		v = n.Content[0].Content[0]
	}
	switch {
	case v.Kind == yaml.AliasNode:
		return readsBroken, trouble(s)
	case v.Kind != yaml.ScalarNode:
		return readsTyped, "a YAML collection, not a string"
	case v.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0:
		if v.Value != s {
			return readsChanged, "quotes, which YAML removes"
		}
	case v.Value == "" || yamlKind(v.Value) != "string":
		return readsTyped, typedWhy(yamlKind(v.Value))
	case v.Value != s:
		return readsChanged, trouble(s)
	}
	return readsSame, ""
}

// typedWhy is why for a value YAML reads as kind k, without building the
// text each time a mount's "0" is scanned.
func typedWhy(k string) string {
	switch k {
	case "null":
		return "a YAML null, not a string"
	case "boolean":
		return "a YAML boolean, not a string"
	case "number":
		return "a YAML number, not a string"
	case "timestamp":
		return "a YAML timestamp, not a string"
	}
	return "a YAML " + k + ", not a string"
}

// trouble names the first construct that stops s from being read as
// itself when written plain.
func trouble(s string) string {
	switch {
	case s == "":
		return "nothing (an empty value is null)"
	case s[0] == ' ' || s[len(s)-1] == ' ' || s[0] == '\t' || s[len(s)-1] == '\t':
		return "leading or trailing blanks, which YAML trims"
	case strings.IndexByte("-?:,[]{}#&*!|>'\"%@`", s[0]) >= 0:
		return "a leading '" + s[:1] + "', a YAML indicator"
	case strings.Contains(s, ": "):
		return "': ', a YAML mapping indicator"
	case strings.Contains(s, " #"):
		return "' #', which starts a YAML comment"
	case strings.HasSuffix(s, ":"):
		return "a trailing ':', a YAML mapping indicator"
	case strings.ContainsRune(s, '\t'):
		return "a tab"
	}
	return "YAML syntax"
}

// hasLineBreak reports whether s holds a character PyYAML reads as a line
// break: LF, CR, NEL (U+0085), LS (U+2028) or PS (U+2029).
func hasLineBreak(s string) bool {
	// By bytes: strings.ContainsAny decodes every rune for a set that is
	// not ASCII. NEL is C2 85 and LS, PS are E2 80 A8, E2 80 A9 in UTF-8.
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n', '\r':
			return true
		case 0xc2:
			if i+1 < len(s) && s[i+1] == 0x85 {
				return true
			}
		case 0xe2:
			if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9) {
				return true
			}
		}
	}
	return false
}

// printable reports whether PyYAML's reader accepts every character of s:
// tab, LF, CR, printable ASCII, NEL and the Unicode ranges it lists
// (U+00A0-U+D7FF, U+E000-U+FFFD, above U+FFFF), in valid UTF-8.
func printable(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return false
		case r == 0x85, r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r > 0xffff:
		default:
			return false
		}
		i += size
	}
	return true
}

// doubleQuoted writes s as a YAML double-quoted scalar that PyYAML reads
// back as exactly s. With braces, every '{' is escaped, so cloud-init's
// jinja step (which runs on the text before YAML) finds no jinja syntax in
// it. ok is false for invalid UTF-8, which no YAML scalar can carry.
func doubleQuoted(s string, braces bool) (q string, ok bool) {
	if !utf8.ValidString(s) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '{' && braces:
			b.WriteString(`\x7b`)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xf])
		case r == 0x2028 || r == 0x2029 || r == 0xfeff || r >= 0xd800 && r <= 0xdfff || r == 0xfffe || r == 0xffff:
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[(r>>shift)&0xf])
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String(), true
}

const hexDigits = "0123456789abcdef"

// literalReading is what PyYAML reads from s written as CABPK writes file
// contents: "content: |" (clip chomping) with every line indented by six
// spaces. exact reports that this is s itself; ok=false means the document
// no longer loads. why names the construct at fault.
func literalReading(s string) (got string, exact, ok bool, why string) {
	if simpleBlock(s) {
		// The common case, allocation-free: YAML reads the lines back as
		// written, only clipping the end to one line feed.
		if exact = s == "" || strings.HasSuffix(s, "\n") && !strings.HasSuffix(s, "\n\n") && strings.TrimLeft(s[strings.LastIndexByte(s[:len(s)-1], '\n')+1:], " ") != "\n"; exact {
			return s, true, true, ""
		}
		if got = strings.TrimRight(s, "\n"); got != "" {
			got += "\n"
		}
		if strings.TrimSpace(got) == "" {
			got = ""
		}
		return got, false, true, ""
	}
	if !printable(s) {
		return "", false, false, "a control character, NUL or invalid UTF-8, which YAML does not allow"
	}
	lines := blockLines(s)
	// The block's indentation is the widest of its leading blank lines and
	// its first other line (libyaml and PyYAML agree).
	indent, first := 0, -1
	for i, l := range lines {
		indent = max(indent, l.width)
		if l.text != "" {
			first = i
			break
		}
	}
	if first < 0 {
		// Only blank lines: clip chomping keeps nothing.
		return "", s == "", true, "only blank lines, which YAML reads as an empty file"
	}
	var b strings.Builder
	end := len(lines)
	if lines[first].width < indent {
		// Blank lines deeper than the first text line: the block holds
		// only those, and the text is past its end.
		end = first
	}
	for i, l := range lines[:end] {
		if i < first {
			b.WriteByte('\n')
			continue
		}
		if l.text != "" && l.width < indent {
			end = i
			break
		}
		if l.width > indent {
			b.WriteString(strings.Repeat(" ", l.width-indent))
		}
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	for _, l := range lines[end:] {
		// Past the end of the block, YAML skips blank and comment lines;
		// anything else is YAML of its own.
		if l.text != "" && l.text[0] != '#' {
			return "", false, false, "a line indented less than the first one (or a carriage return or Unicode line separator before text), which ends the YAML block early"
		}
	}
	if got = strings.TrimRight(b.String(), "\n"); got != "" {
		got += "\n"
	}
	switch {
	case end < len(lines):
		return got, false, true, "a comment line indented less than the first line, which ends the YAML block early: the rest of the file is lost"
	case indent > 6:
		return got, false, true, "a first line that is indented, so YAML removes that indentation from every line"
	}
	return got, got == s, true, ""
}

// simpleBlock reports content the fast path of literalReading reads: tabs,
// line feeds and printable ASCII only, and a first text line that is not
// indented (leading empty lines are fine, leading blanks are not).
func simpleBlock(s string) bool {
	simple, _ := scanBlock(s)
	return simple
}

// scanBlock is simpleBlock, and whether s has a '{' (which may start jinja
// syntax), in the one pass over each file's content that the hazard scan
// makes: certificates and keys are most of a document. braces is only
// meaningful when simple is true.
func scanBlock(s string) (simple, braces bool) {
	i := 0
	for i < len(s) && s[i] == '\n' {
		i++
	}
	if i < len(s) && s[i] == ' ' {
		return false, false
	}
	// Eight bytes at a time, exactly: a line feed every 65 bytes must not
	// send a word to a byte loop. With every byte's high bit set (w|highs;
	// the high bits are checked apart), subtracting k from each byte
	// borrows from no other byte, and the byte's high bit stays set exactly
	// when its low seven bits are >= k. Four words per iteration share one
	// bounds check.
	var bad, brace uint64
	for ; i+32 <= len(s); i += 32 {
		b := s[i : i+32]
		w0, w1, w2, w3 := word(b[0:8]), word(b[8:16]), word(b[16:24]), word(b[24:32])
		bad |= badBytes(w0) | badBytes(w1) | badBytes(w2) | badBytes(w3)
		brace |= braceBytes(w0) | braceBytes(w1) | braceBytes(w2) | braceBytes(w3)
	}
	for ; i+8 <= len(s); i += 8 {
		w := word(s[i : i+8])
		bad |= badBytes(w)
		brace |= braceBytes(w)
	}
	if bad&highs != 0 {
		return false, false
	}
	for ; i < len(s); i++ {
		if !blockByte[s[i]] {
			return false, false
		}
		if s[i] == '{' {
			brace = highs
		}
	}
	return true, brace&highs != 0
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// word is the eight bytes of b, the first in the lowest byte.
func word(b string) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// badBytes has a byte's high bit set where w has a byte that is not a tab,
// a line feed or printable ASCII: below 0x20 except tab (0x09) and line
// feed (0x0a), 0x7f, and anything with the high bit set. Only the high
// bits mean anything: callers mask them once, after the last word.
func badBytes(w uint64) uint64 {
	h := w | highs
	tabLF := (h - 0x09*ones) &^ (h - 0x0b*ones)
	return w | (h - 0x7f*ones) | ^(h - 0x20*ones | tabLF)
}

// braceBytes has a byte's high bit set where the low seven bits of w's
// byte are '{' (0x7b); only the high bits mean anything.
func braceBytes(w uint64) uint64 {
	h := w | highs
	return (h - 0x7b*ones) &^ (h - 0x7c*ones)
}

// blockByte marks the bytes simpleBlock lets through: tab, line feed and
// printable ASCII.
var blockByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	t['\t'], t['\n'] = true, true
	return t
}()

// blockLine is one line of file content as it stands in the document.
type blockLine struct {
	// width is the line's indentation in the document: the layout's six
	// spaces (only after a line feed, where the layout indents) plus the
	// line's own leading spaces.
	width int
	// text is the rest of the line; "" for a blank line.
	text string
}

// blockLines splits s where PyYAML breaks lines: LF, CRLF, CR, NEL, LS, PS.
func blockLines(s string) []blockLine {
	var out []blockLine
	indented := true
	for {
		i := strings.IndexAny(s, "\n\r\u0085\u2028\u2029")
		line, next, rest := s, 0, ""
		if i >= 0 {
			line = s[:i]
			_, size := utf8.DecodeRuneInString(s[i:])
			next, rest = size, s[i+size:]
			if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
				next, rest = 2, s[i+2:]
			}
		}
		trimmed := strings.TrimLeft(line, " ")
		w := len(line) - len(trimmed)
		if indented {
			w += 6
		}
		out = append(out, blockLine{width: w, text: trimmed})
		if i < 0 {
			return out
		}
		// The layout indents after LF only; a bare CR, NEL, LS or PS leaves
		// the next line at column zero. A CR ending the content is followed
		// by the layout's own line feed.
		brk := s[i : i+next]
		indented = brk == "\n" || brk == "\r\n" || brk == "\r" && rest == ""
		if brk == "\r" && rest == "" {
			return out
		}
		s = rest
	}
}
