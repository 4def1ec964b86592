package cloudinit

import (
	"strconv"
	"strings"
)

// yaml.v3 spends about 5 µs of emitter events and reflection on every value
// of a plain document, four fifths of the plain dialect's render time
// (BenchmarkRenderDialects, cloudinit/bench_test.go), while the document
// has one fixed shape. emitPlain writes that shape directly, and each
// string in the style yaml.v3 picks for it, following yaml.v3's own rules
// (stringv in its encode.go, yaml_emitter_analyze_scalar and
// yaml_emitter_select_scalar_style in its emitterc.go). Where those rules
// need more than printable ASCII, tabs and line feeds to decide, emitPlain
// gives up and yaml.v3 marshals the whole document, so the bytes are always
// yaml.v3's: TestPlainEmit and FuzzPlainEmit compare the two. (yaml.go
// answers another question for CABPK's hand-laid layout: what PyYAML reads
// a value written plain as. Here the writer is yaml.v3 and the question is
// which style it picks, so its rules are followed, not PyYAML's.)

// emitPlain appends d as yaml.v3 (indent 2) writes it, or reports false.
func emitPlain(b []byte, d *plainDoc) ([]byte, bool) {
	e := plainEmitter{b: b, ok: true}
	e.list("bootcmd", d.BootCmd, 0)
	if len(d.WriteFiles) > 0 {
		e.raw("write_files:\n")
		for i := range d.WriteFiles {
			f := &d.WriteFiles[i]
			e.item()
			e.field("path", f.Path, 4, true)
			e.field("encoding", f.Encoding, 4, false)
			e.field("owner", f.Owner, 4, false)
			e.field("permissions", f.Permissions, 4, false)
			if f.Append {
				e.raw("    append: true\n")
			}
			if f.Defer {
				e.raw("    defer: true\n")
			}
			e.field("content", f.Content, 4, true)
		}
	}
	if len(d.Users) > 0 {
		e.raw("users:\n")
		for i := range d.Users {
			u := &d.Users[i]
			e.item()
			e.field("name", u.Name, 4, true)
			e.field("gecos", u.Gecos, 4, false)
			e.list("groups", u.Groups, 4)
			e.field("homedir", u.HomeDir, 4, false)
			e.field("shell", u.Shell, 4, false)
			e.field("primary_group", u.PrimaryGroup, 4, false)
			e.field("passwd", u.Passwd, 4, false)
			if u.LockPasswd != nil {
				e.raw("    lock_passwd: " + strconv.FormatBool(*u.LockPasswd) + "\n")
			}
			e.field("expiredate", u.ExpireDate, 4, false)
			e.field("sudo", u.Sudo, 4, false)
			e.list("ssh_authorized_keys", u.SSHAuthorizedKeys, 4)
		}
	}
	if len(d.DiskSetup) > 0 || len(d.FSSetup) > 0 {
		// Rare, and with maps and untyped layouts: yaml.v3 writes these.
		e.ok = false
	}
	if len(d.Mounts) > 0 {
		e.raw("mounts:\n")
		for _, m := range d.Mounts {
			if len(m) == 0 {
				e.ok = false // "- []"
			}
			for i, v := range m {
				if i == 0 {
					e.raw("  - - ")
				} else {
					e.raw("    - ")
				}
				e.scalar(v, 6)
			}
		}
	}
	if n := d.NTP; n != nil {
		if n.Enabled == nil && len(n.Servers) == 0 {
			e.raw("ntp: {}\n")
		} else {
			e.raw("ntp:\n")
			if n.Enabled != nil {
				e.raw("  enabled: " + strconv.FormatBool(*n.Enabled) + "\n")
			}
			e.list("servers", n.Servers, 2)
		}
	}
	e.list("runcmd", d.RunCmd, 0)
	if len(e.b) == len(b) {
		e.raw("{}\n") // no key at all: an empty mapping
	}
	return e.b, e.ok
}

type plainEmitter struct {
	b  []byte
	ok bool
	// inItem says "- " of a top-level list item was just written: the
	// item's first key goes on that line, at column 4.
	inItem bool
}

func (e *plainEmitter) raw(s string) { e.b = append(e.b, s...) }

func (e *plainEmitter) item() {
	e.raw("  - ")
	e.inItem = true
}

func (e *plainEmitter) indent(n int) {
	if e.inItem {
		e.inItem = false
		return
	}
	e.b = appendIndent(e.b, n)
}

// field writes "key: value" at indent, or nothing for an empty value that
// yaml.v3 omits (omitempty).
func (e *plainEmitter) field(key string, v plainText, indent int, always bool) {
	if v == "" && !always {
		return
	}
	e.indent(indent)
	e.b = append(e.b, key...)
	e.b = append(e.b, ':', ' ')
	e.scalar(string(v), indent+2)
}

// list writes a block sequence under key at indent, or nothing when empty.
func (e *plainEmitter) list(key string, vs []string, indent int) {
	if len(vs) == 0 {
		return
	}
	e.indent(indent)
	e.b = append(e.b, key...)
	e.b = append(e.b, ":\n"...)
	for _, v := range vs {
		e.b = appendIndent(e.b, indent+2)
		e.b = append(e.b, '-', ' ')
		e.scalar(v, indent+4)
	}
}

func appendIndent(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}

// scalar writes s and its line break as yaml.v3 does for a block mapping
// value or sequence item; a multi-line literal's lines go at indent.
func (e *plainEmitter) scalar(s string, indent int) {
	if !e.ok {
		return
	}
	switch scalarStyle(s) {
	case stylePlain:
		e.b = append(e.b, s...)
	case styleSingleQuoted:
		e.b = append(e.b, '\'')
		for i := 0; i < len(s); i++ {
			if s[i] == '\'' {
				e.b = append(e.b, '\'')
			}
			e.b = append(e.b, s[i])
		}
		e.b = append(e.b, '\'')
	case styleDoubleQuoted:
		e.b = append(e.b, '"')
		for i := 0; i < len(s); i++ {
			if s[i] == '"' || s[i] == '\\' {
				e.b = append(e.b, '\\')
			}
			e.b = append(e.b, s[i])
		}
		e.b = append(e.b, '"')
	case styleLiteral:
		e.b = append(e.b, '|')
		if s[len(s)-1] != '\n' {
			e.b = append(e.b, '-')
		}
		e.b = append(e.b, '\n')
		for line := range strings.Lines(s) {
			if line != "\n" {
				e.b = appendIndent(e.b, indent)
			}
			e.b = append(e.b, line...)
		}
		if s[len(s)-1] == '\n' {
			return
		}
	default:
		e.ok = false
		return
	}
	e.b = append(e.b, '\n')
}

type scalarStyleKind int

const (
	styleUnknown scalarStyleKind = iota
	stylePlain
	styleSingleQuoted
	styleDoubleQuoted
	styleLiteral
)

// scalarStyle is the style yaml.v3 writes s in as an untagged string in
// block context, or styleUnknown where that takes more of its rules than
// these (bytes other than printable ASCII, tabs and line feeds; strings
// that may read as numbers or timestamps; literals that need an
// indentation indicator or "|+").
func scalarStyle(s string) scalarStyleKind {
	if s == "" {
		return styleDoubleQuoted // reads as null unquoted
	}
	lines := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n':
			lines = true
		case c == '\t', c >= 0x20 && c < 0x7f:
		default:
			return styleUnknown
		}
	}
	if lines {
		// stringv picks the literal style; block_allowed needs no blank
		// before a line break or at the end.
		if s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[len(s)-1] == ' ' ||
			strings.Contains(s, " \n") || strings.HasSuffix(s, "\n\n") {
			return styleUnknown
		}
		return styleLiteral
	}
	if strings.IndexByte(s, '\t') >= 0 {
		return styleUnknown // double-quoted with escapes
	}
	switch resolvesToString(s) {
	case resolveOther:
		return styleDoubleQuoted
	case resolveUnknown:
		return styleUnknown
	}
	if blockPlainAllowed(s) {
		return stylePlain
	}
	return styleSingleQuoted
}

type resolution int

const (
	resolveString resolution = iota
	resolveOther
	resolveUnknown
)

// resolvesToString follows yaml.v3's resolve and stringv: what the plain
// scalar s would read as, for a non-empty single line of printable ASCII.
func resolvesToString(s string) resolution {
	switch c := s[0]; {
	case c >= '0' && c <= '9':
		return resolveDigitFirst(s)
	case c == '+' || c == '-' || c == '.':
		// A sign or dot, then a digit, dot or underscore may be a number
		// (ParseInt reads "-_1" as -1); ".inf" and ".nan" are in the map.
		if len(s) > 1 && (s[1] >= '0' && s[1] <= '9' || s[1] == '.' || s[1] == '_') {
			return resolveUnknown
		}
	}
	switch s {
	case "=", "<<":
		// Plain, PyYAML reads them as its value and merge tags
		// (plain_pyyaml.go): encodePlain quotes them as yaml.v3 does the
		// others.
		return resolveOther
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF",
		"true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "~",
		// isOldBool: YAML 1.1's booleans, quoted for YAML 1.1 readers.
		"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF":
		return resolveOther
	}
	return resolveString
}

// resolveDigitFirst tells a string that starts with a digit: digits alone
// are an int (or a float when too long for one); digits and two or more
// dots (an IPv4 address) and anything with a byte no number, timestamp or
// sexagesimal float has (a host name such as 0.pool.ntp.org) are
// strings; the rest takes yaml.v3's resolve.
func resolveDigitFirst(s string) resolution {
	digits, dots := true, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			continue
		case c == '.':
			dots++
		case strings.IndexByte("_+-:xXoObBtTzZ eEabcdfABCDF", c) >= 0:
		default:
			return resolveString
		}
		digits = false
	}
	switch {
	case digits:
		return resolveOther
	case dots >= 2 && strings.Trim(s, "0123456789.") == "":
		return resolveString
	}
	return resolveUnknown
}

// blockPlainAllowed is yaml_emitter_analyze_scalar's block_plain_allowed
// for a single line of printable ASCII without tabs.
func blockPlainAllowed(s string) bool {
	if s[0] == ' ' || s[len(s)-1] == ' ' || strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		return false
	}
	followedByBlank := func(i int) bool { return i+1 >= len(s) || s[i+1] == ' ' }
	switch s[0] {
	case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '?', ':', '-':
		if followedByBlank(0) {
			return false
		}
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case ':':
			if followedByBlank(i) {
				return false
			}
		case '#':
			if s[i-1] == ' ' {
				return false
			}
		}
	}
	return true
}
