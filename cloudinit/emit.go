package cloudinit

import (
	"bytes"
	"path"
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

type emitter struct {
	buf     bytes.Buffer
	scratch []byte
	// scratchArr backs scratch so quoting short commands allocates nothing.
	scratchArr  [512]byte
	corrections bool
	// hazards is filled by Check and consulted when corrections are on.
	hz *hazards
	// sizes of the parts, for Output.Sizes.
	filesBytes, commandsBytes int
}

func (e *emitter) s(parts ...string) {
	for _, p := range parts {
		e.buf.WriteString(p)
	}
}

func (e *emitter) plan(p *provisioning.Plan) {
	e.buf.WriteString(header)
	start := e.buf.Len()
	e.buf.WriteString("write_files:")
	for i := range p.Files {
		e.file(i, &p.Files[i])
	}
	if p.Sentinel != "" {
		dir := path.Dir(p.Sentinel)
		e.s("\n-   path: ", dir, "/placeholder\n    owner: root:root\n    permissions: '0640'\n    content: \"")
		e.s(strings.Replace(strings.Replace(placeholderFormat, "%s", dir, 1), "%s", dir, 1), "\"")
	}
	e.filesBytes = e.buf.Len() - start
	start = e.buf.Len()
	if len(p.BootCommands) > 0 {
		e.buf.WriteString("\nbootcmd:")
		for i, c := range p.BootCommands {
			e.quotedCommand(c, e.hz.bootJinja(i))
		}
	}
	e.buf.WriteString("\nruncmd:")
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
	e.commandsBytes = e.buf.Len() - start
	e.ntp(p.NTP)
	e.users(p.Users)
	e.disks(p.Disks)
	e.mounts(p.Mounts)
	e.buf.WriteByte('\n')
}

func (e *emitter) file(i int, f *provisioning.File) {
	content, encoding := f.Content, f.Encoding
	if e.corrections {
		content, encoding, _ = correctedContent(f, e.hz.fileJinja(i))
	}
	e.s("\n-   path: ")
	e.val(f.Path)
	e.buf.WriteString("\n    ")
	if encoding != "" {
		e.s("encoding: \"", string(encoding), "\"\n    ")
	}
	if f.Owner != "" {
		e.buf.WriteString("owner: ")
		e.val(f.Owner)
		e.buf.WriteString("\n    ")
	}
	if f.Permissions != "" {
		if q, ok := doubleQuoted(f.Permissions, true); e.corrections && ok && !singleQuotable(f.Permissions) {
			e.s("permissions: ", q, "\n    ")
		} else {
			e.s("permissions: '", f.Permissions, "'\n    ")
		}
	}
	if f.Append != nil {
		e.s("append: ", strconv.FormatBool(*f.Append), "\n    ")
	}
	e.buf.WriteString("content: |\n")
	e.indent(6, content)
}

// val writes a scalar the layout writes plain. Under corrections a value
// that YAML (or jinja before it) would read differently is double-quoted,
// braces escaped, so it reads back as exactly what was declared.
func (e *emitter) val(v string) { e.scalar(v, false, false) }

// scalar is val for a mapping key (key), or for a value whose intended
// type is a number when it reads as one (number).
func (e *emitter) scalar(v string, key, number bool) {
	if e.corrections && v != "" {
		jinja := jinjaHazard(v) != ""
		r, _ := plainReading(v, key)
		if number && r == readsTyped && yamlKind(v) == "number" {
			r = readsSame
		}
		if r != readsSame || jinja {
			if q, ok := doubleQuoted(v, jinja); ok {
				e.buf.WriteString(q)
				return
			}
		}
	}
	e.buf.WriteString(v)
}

// singleQuotable reports whether v reads back as itself between single
// quotes, as the layout writes permissions.
func singleQuotable(v string) bool {
	return printable(v) && !hasLineBreak(v) && !strings.Contains(v, "'") && jinjaHazard(v) == ""
}

// indent writes every line of s, the last (possibly empty) one included,
// prefixed with n spaces.
func (e *emitter) indent(n int, s string) {
	const spaces = "          "
	for {
		e.buf.WriteString(spaces[:n])
		nl := strings.IndexByte(s, '\n')
		if nl < 0 {
			e.buf.WriteString(s)
			return
		}
		e.buf.WriteString(s[:nl+1])
		s = s[nl+1:]
	}
}

func (e *emitter) quotedCommand(c string, jinja bool) {
	e.buf.WriteString("\n  - ")
	if e.scratch == nil {
		e.scratch = e.scratchArr[:0]
	}
	e.scratch = strconv.AppendQuote(e.scratch[:0], c)
	if e.corrections && jinja {
		// The command is a YAML double-quoted string, where \x7b is '{':
		// jinja, which reads the text before YAML does, finds no syntax in
		// it, and YAML reads back the exact command.
		for _, b := range e.scratch {
			if b == '{' {
				e.buf.WriteString(`\x7b`)
			} else {
				e.buf.WriteByte(b)
			}
		}
		return
	}
	e.buf.Write(e.scratch)
}

func (e *emitter) bootstrapCommand(p *provisioning.Plan, script string) {
	sentinel := ""
	if p.Sentinel != "" {
		sentinel = " && echo success > " + p.Sentinel
	}
	e.buf.WriteString("\n  - ")
	if p.Role != provisioning.RoleInit {
		if line := script + sentinel; plainSafe(line) {
			e.buf.WriteString(line)
			return
		}
	}
	e.s("'", strings.ReplaceAll(script, "'", "''"), strings.ReplaceAll(sentinel, "'", "''"), "'")
}
