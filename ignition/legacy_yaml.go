package ignition

import (
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "gopkg.in/yaml.v3"
)

// CABPK places Plan values into a Container Linux Config template and parses
// the result as YAML, so the transpiler sees what a YAML parser reads, not
// what the user wrote. The legacy dialect applies the same readings to typed
// values, each written down here once:
//
//   - A plain scalar ("gecos: VALUE", "- VALUE"): quotes are removed, " #..."
//     is a comment, "~"/"null"/"" are null, "&a"/"!!tag" prefixes vanish.
//   - A literal block ("inline: |" with content indented ten spaces): line
//     breaks are normalised to "\n", trailing empty lines are clipped to one
//     final newline, and when the first content line is indented further the
//     whole block loses that extra indentation.
//   - A file mode ("mode: 0644") is a YAML integer: a leading 0 makes it
//     octal, without one it is decimal ("644" is mode 01204).
//
// A value the parser would reject makes CABPK fail, so it is an error here too.

// literalIndent is the column at which CABPK's template places file contents.
const literalIndent = 10

// yamlChars reports whether s holds only characters a YAML document may carry
// (printable Unicode, tab and line breaks).
func yamlChars(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
		case r < 0x20 || r == 0x7f || r == 0xfeff || r == utf8.RuneError:
			return false
		case r >= 0x80 && r <= 0x9f:
			return false
		}
	}
	return true
}

// plainScalar returns what YAML reads from s written as a plain scalar: the
// string, whether it is null, and ok=false when the parser rejects it.
func plainScalar(s string) (v string, null, ok bool) {
	if plainSafe(s) {
		return s, false, true
	}
	if s == "" {
		return "", true, true
	}
	if strings.ContainsAny(s, "\n\r") || !yamlChars(s) {
		return "", false, false
	}
	var doc struct {
		K *string `yaml:"k"`
	}
	if err := yaml.Unmarshal([]byte("k: "+s+"\n"), &doc); err != nil {
		return "", false, false
	}
	if doc.K == nil {
		return "", true, true
	}
	return *doc.K, false, true
}

// plainSafe is the fast path of plainScalar: strings YAML reads back as
// themselves.
func plainSafe(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' || s[len(s)-1] == ':' {
		return false
	}
	if strings.IndexByte("-?:,[]{}#&*!|>'\"%@`\t", s[0]) >= 0 {
		return false
	}
	switch s {
	case "~", "null", "Null", "NULL":
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return !strings.Contains(s, ": ") && !strings.Contains(s, " #")
}

// literalBlock returns what YAML reads from s placed in a literal block at
// literalIndent, with clip chomping, following libyaml's scanner: the block's
// indentation is the largest of its leading blank lines and its first
// non-blank line. reindented reports that YAML removed indentation the
// author wrote; ok=false means the parser (and so CABPK) fails on it.
func literalBlock(s string) (v string, reindented, ok bool) {
	if !yamlChars(s) {
		return "", false, false
	}
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	}
	lines := strings.Split(s, "\n")
	first, extra := -1, 0
	for i, l := range lines {
		lead := leadingSpaces(l)
		extra = max(extra, lead)
		if lead < len(l) {
			if l[lead] == '\t' {
				return "", false, false
			}
			first = i
			break
		}
	}
	if first < 0 {
		return "", false, true
	}
	if extra == 0 {
		// The common case: every line keeps what the author wrote.
		if s = strings.TrimRight(s, "\n"); s == "" {
			return "", false, true
		}
		return s + "\n", false, true
	}
	var b strings.Builder
	for i, l := range lines {
		lead := leadingSpaces(l)
		switch {
		case i < first:
			l = ""
		case lead >= extra:
			l = l[extra:]
		case lead == len(l):
			l = ""
		default:
			// Less indented than the block, or a tab where YAML wants
			// indentation spaces: the block ends and the template breaks.
			return "", false, false
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	out := strings.TrimRight(b.String(), "\n")
	if out == "" {
		return "", extra > 0, true
	}
	return out + "\n", extra > 0, true
}

func leadingSpaces(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// yamlMode returns the file mode YAML reads from "mode: PERMISSIONS", and
// whether that is the octal mode the author meant; -1 when YAML reads no
// integer there.
func yamlMode(perm string) (mode int, asMeant bool) {
	v, err := strconv.ParseInt(perm, 0, 64)
	if err != nil {
		return -1, false
	}
	octal, _ := strconv.ParseInt(perm, 8, 64)
	return int(v), v == octal
}
