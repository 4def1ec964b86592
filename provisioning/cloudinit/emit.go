package cloudinit

import (
	"encoding/binary"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Layout rules of CABPK's cloud-config, in the order they appear in the output:
//
//   - Header "## template: jinja\n#cloud-config\n" and an empty line.
//   - "write_files:", then each file as "-   path: P" (dash and three spaces),
//     followed by the keys that are set, four spaces in, in this order:
//     encoding (double-quoted), owner (plain), permissions (single-quoted),
//     append (bool); then "content: |" and every line of the content indented
//     by six spaces, a final empty line included — so content ending in a
//     newline leaves a line of six spaces.
//   - When the plan has a sentinel, a placeholder file in the sentinel's
//     directory with a double-quoted one-line content (it makes the directory
//     on Linux and Windows alike).
//   - "bootcmd:" when there are boot commands, each "  - " and Go-quoted (%q).
//   - "runcmd:", pre commands Go-quoted, then the bootstrap command followed by
//     "&& echo success > SENTINEL" — single-quoted for the init node, plain for
//     joining nodes — then post commands Go-quoted.
//   - "ntp:" (enabled first when set, then "servers:"), "users:" (keys in the
//     order name, passwd, gecos, groups, homedir, inactive, lock_passwd, shell,
//     primary_group, sudo, ssh_authorized_keys), "disk_setup:" and "fs_setup:"
//     (both whenever disks are set), "mounts:" as nested lists whose entries
//     each end with a line of four spaces.
//   - Scalars are written plain, exactly as given; booleans that are set are
//     written true or false; an unset partition layout is written "<nil>".
//   - The document ends with a newline.
//
// With corrections on, the same layout is kept and only the hazardous values
// change (see hazards.go).

const (
	header            = "## template: jinja\n#cloud-config\n\n"
	placeholderFormat = "This placeholder file is used to create the %s sub directory in a way that is compatible with both Linux and Windows (mkdir -p %s does not work with Windows)"
)

// placeholderText is placeholderFormat split at its verbs, so writing it
// formats nothing.
var placeholderText = strings.SplitN(placeholderFormat, "%s", 3)

// doc is the document being written: a plain byte slice rather than a
// bytes.Buffer, whose WriteString is not inlined, because the layout is
// written in hundreds of short pieces. Writing only reslices (no pointer
// store, so no GC write barrier) unless the estimate was short: append
// would store the slice's pointer back on every write, and the emitter's
// methods write through a pointer the compiler cannot place on the stack.
type doc []byte

func (d *doc) add(s string) {
	n := len(*d)
	if cap(*d)-n < len(s) {
		// Growing stores the new pointer; append rather than a call
		// keeps add small enough to be inlined at every write.
		*d = append(*d, s...)
		return
	}
	*d = (*d)[:n+len(s)]
	copy((*d)[n:], s)
}

func (d *doc) addByte(c byte) {
	n := len(*d)
	if cap(*d) == n {
		*d = append(*d, c)
		return
	}
	*d = (*d)[:n+1]
	(*d)[n] = c
}

//go:noinline
func (d *doc) grow(n int) { *d = slices.Grow(*d, n) }

type emitter struct {
	buf         doc
	corrections bool
	// hazards is filled by Check and consulted when corrections are on.
	hz *hazards
	// sizes of the parts, for Output.Sizes.
	filesBytes, commandsBytes int
}

func (e *emitter) s(parts ...string) {
	for _, p := range parts {
		e.buf.add(p)
	}
}

func (e *emitter) plan(p *provisioning.Plan) {
	e.buf.add(header)
	start := len(e.buf)
	e.buf.add("write_files:")
	for i := range p.Files {
		e.file(i, &p.Files[i])
	}
	if p.Sentinel != "" {
		dir := path.Dir(p.Sentinel)
		e.s("\n-   path: ", dir, "/placeholder\n    owner: root:root\n    permissions: '0640'\n    content: \"")
		e.s(placeholderText[0], dir, placeholderText[1], dir, placeholderText[2], "\"")
	}
	e.filesBytes = len(e.buf) - start
	start = len(e.buf)
	if len(p.BootCommands) > 0 {
		e.buf.add("\nbootcmd:")
		for i, c := range p.BootCommands {
			e.quotedCommand(c, e.hz.bootJinja(i))
		}
	}
	e.buf.add("\nruncmd:")
	for i := range p.Commands {
		if p.Commands[i].Phase == provisioning.PhasePre {
			e.quotedCommand(p.Commands[i].Script, e.hz.commandJinja(i))
		}
	}
	for i := range p.Commands {
		if p.Commands[i].Phase == provisioning.PhaseBootstrap {
			e.bootstrapCommand(p, p.Commands[i].Script)
		}
	}
	for i := range p.Commands {
		if p.Commands[i].Phase == provisioning.PhasePost {
			e.quotedCommand(p.Commands[i].Script, e.hz.commandJinja(i))
		}
	}
	e.commandsBytes = len(e.buf) - start
	e.ntp(p.NTP)
	e.users(p.Users)
	e.disks(p.Disks)
	e.mounts(p.Mounts)
	e.buf.addByte('\n')
}

func (e *emitter) file(i int, f *provisioning.File) {
	content, encoding := f.Content, f.Encoding
	if e.corrections {
		content, encoding, _ = correctedContent(f, e.hz.fileJinja(i))
	}
	// Each key is written with the line break and indent before it, so
	// every constant run of the layout is one write.
	e.buf.add("\n-   path: ")
	e.val(f.Path)
	if encoding != "" {
		e.s("\n    encoding: \"", string(encoding), "\"")
	}
	if f.Owner != "" {
		e.buf.add("\n    owner: ")
		e.val(f.Owner)
	}
	if f.Permissions != "" {
		q, ok := "", false
		if e.corrections && !singleQuotable(f.Permissions) {
			q, ok = doubleQuoted(f.Permissions, true)
		}
		if ok {
			e.s("\n    permissions: ", q)
		} else {
			e.s("\n    permissions: '", f.Permissions, "'")
		}
	}
	if f.Append != nil {
		e.s("\n    append: ", strconv.FormatBool(*f.Append))
	}
	e.buf.add("\n    content: |\n")
	e.indent6(content)
}

// val writes a scalar the layout writes plain. Under corrections a value
// that YAML (or jinja before it) would read differently is double-quoted,
// braces escaped, so it reads back as exactly what was declared.
func (e *emitter) val(v string) {
	if !e.corrections {
		e.buf.add(v)
		return
	}
	e.scalar(v, false, false)
}

// scalar is val for a mapping key (key), or for a value whose intended
// type is a number when it reads as one (number).
func (e *emitter) scalar(v string, key, number bool) {
	if !e.corrections {
		e.buf.add(v)
		return
	}
	if v != "" {
		jinja := jinjaHazard(v) != ""
		r, _ := plainReading(v, key)
		if number && r == readsTyped && yamlKind(v) == "number" {
			r = readsSame
		}
		if r != readsSame || jinja {
			if q, ok := doubleQuoted(v, jinja); ok {
				e.buf.add(q)
				return
			}
		}
	}
	e.buf.add(v)
}

// singleQuotable reports whether v reads back as itself between single
// quotes, as the layout writes permissions.
func singleQuotable(v string) bool {
	if quotableASCII(v) {
		return true
	}
	return printable(v) && !hasLineBreak(v) && !strings.Contains(v, "'") && jinjaHazard(v) == ""
}

// quotableASCII is singleQuotable's fast path for the common mode such as
// 0640: printable ASCII without a quote, or a brace that could start jinja.
func quotableASCII(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || c == '\'' || c == '{' {
			return false
		}
	}
	return true
}

// indent6 writes every line of s, the last (possibly empty) one included,
// prefixed with the six spaces file contents are indented by.
func (e *emitter) indent6(s string) {
	const indent = 6
	// Filled through a local slice, a line at a time: file contents are
	// most of the document. The indent is stored as one eight-byte word,
	// so each line needs two bytes of slack after it; room is checked per
	// line rather than by counting the lines first, which would be one
	// more pass over every content. e.buf is only resliced at the end (no
	// pointer store, as in doc.add) unless it had to grow.
	at := len(e.buf)
	d := e.buf[:cap(e.buf)]
	for {
		nl := strings.IndexByte(s, '\n')
		line := s
		if nl >= 0 {
			line = s[:nl+1]
		}
		if len(d)-at < len(line)+8 {
			e.buf = e.buf[:at]
			e.buf.grow(len(line) + 8)
			d = e.buf[:cap(e.buf)]
		}
		binary.LittleEndian.PutUint64(d[at:], 0x2020202020202020)
		at += indent
		at += copy(d[at:], line)
		if nl < 0 {
			break
		}
		s = s[nl+1:]
	}
	e.buf = e.buf[:at]
}

func (e *emitter) quotedCommand(c string, jinja bool) {
	e.buf.add("\n  - ")
	if !e.corrections || !jinja {
		if !e.quoteASCII(c) {
			e.buf = strconv.AppendQuote(e.buf, c)
		}
		return
	}
	// The command is a YAML double-quoted string, where \x7b is '{':
	// jinja, which reads the text before YAML does, finds no syntax in it,
	// and YAML reads back the exact command.
	q := strconv.Quote(c)
	for i := 0; i < len(q); i++ {
		if q[i] == '{' {
			e.buf.add(`\x7b`)
		} else {
			e.buf.addByte(q[i])
		}
	}
}

// quoteASCII writes c as strconv.Quote (CABPK's %q) does when c holds only
// printable ASCII, tabs and line feeds, as commands usually do, without
// quoting into a scratch buffer first. It writes nothing and reports false
// for any other c.
func (e *emitter) quoteASCII(c string) bool {
	// One pass: runs of plain bytes are copied as the escapes are met,
	// and anything else takes back what was written.
	mark := len(e.buf)
	e.buf.addByte('"')
	start := 0
	for i := 0; i < len(c); i++ {
		var esc string
		switch b := c[i]; {
		case b >= 0x20 && b <= 0x7e && b != '"' && b != '\\':
			continue
		case b == '"':
			esc = `\"`
		case b == '\\':
			esc = `\\`
		case b == '\n':
			esc = `\n`
		case b == '\t':
			esc = `\t`
		default:
			e.buf = e.buf[:mark]
			return false
		}
		e.buf.add(c[start:i])
		e.buf.add(esc)
		start = i + 1
	}
	e.buf.add(c[start:])
	e.buf.addByte('"')
	return true
}

func (e *emitter) bootstrapCommand(p *provisioning.Plan, script string) {
	const echo = " && echo success > "
	e.buf.add("\n  - ")
	if p.Role != provisioning.RoleInit {
		line := script
		if p.Sentinel != "" {
			line = script + echo + p.Sentinel
		}
		if plainSafe(line) {
			e.buf.add(line)
			return
		}
	}
	e.s("'", strings.ReplaceAll(script, "'", "''"))
	if p.Sentinel != "" {
		e.s(echo, strings.ReplaceAll(p.Sentinel, "'", "''"))
	}
	e.buf.addByte('\'')
}
