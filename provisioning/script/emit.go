package script

import (
	_ "embed"
	"strconv"
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"
)

// preamble is the header and the helper functions every script starts
// with: one file of shell, read and syntax-checked (TestSyntax), instead
// of shell scattered through Go strings. Each step below calls these
// helpers with quoted words and here-documents only.
//
//go:embed preamble.sh
var preamble string

const (
	defaultMode = "0644"
	// sudoersFile holds every user's sudo rule. One file, whose name has
	// no '.', because sudo's includedir skips files with a '.' in their
	// name: a per-user file for "jane.doe" would be silently ignored.
	sudoersFile = "/etc/sudoers.d/90-nodeboot-users"
	// sudoersNew is checked with visudo before it replaces sudoersFile;
	// sudo ignores it because of the '.'.
	sudoersNew = "/etc/sudoers.d/.90-nodeboot-users.new"
)

// emitter writes a script. Steps come in a fixed order, the one the
// Plan's field comments give: boot commands, files, users, file owners,
// units, then the commands in phase order with the sentinel after the
// bootstrap command.
type emitter struct {
	b     strings.Builder
	sizes map[string]int
}

func newEmitter(p *provisioning.Plan) *emitter {
	e := &emitter{sizes: map[string]int{}}
	n := len(preamble) + 256 + len(p.Sentinel)
	for i := range p.Files {
		n += 64 + len(p.Files[i].Path) + len(p.Files[i].Content)*4/3
	}
	for i := range p.Commands {
		n += 32 + len(p.Commands[i].Script)*9/8
	}
	e.b.Grow(n)
	return e
}

func (e *emitter) bytes() []byte { return []byte(e.b.String()) }

func (e *emitter) w(parts ...string) {
	for _, s := range parts {
		e.b.WriteString(s)
	}
}

// section runs f and books the bytes it wrote under name.
func (e *emitter) section(name string, f func()) {
	start := e.b.Len()
	f()
	if n := e.b.Len() - start; n > 0 {
		e.sizes[name] += n
	}
}

func (e *emitter) plan(p *provisioning.Plan) {
	e.w(preamble)
	if need := needs(p); len(need) > 0 {
		e.w("nb_need ", strings.Join(need, " "), "\n")
	}
	e.section(provisioning.SizeCommands, func() {
		for i, c := range p.BootCommands {
			e.w("\n# bootCommands[", itoa(i), "]: run once, by this script\n")
			e.run(p.SectionPath(provisioning.SectionBootCommands).Index(i).String(), c)
		}
	})
	e.section(provisioning.SizeFiles, func() {
		for i := range p.Files {
			e.w("\n# files[", itoa(i), "]\n")
			e.file(&p.Files[i])
		}
	})
	e.section(SizeUsers, func() { e.users(p.Users) })
	e.section(provisioning.SizeFiles, func() {
		started := false
		for i := range p.Files {
			if f := &p.Files[i]; f.Owner != "" {
				if !started {
					e.w("\n# file owners, once the users exist\n")
					started = true
				}
				e.w("chown ", quote(f.Owner), " ", quote(f.Path), "\n")
				if f.SpecialBits() {
					// chown clears setuid and setgid (Ignition sets
					// the mode after the owner for the same reason).
					e.w("chmod ", f.Permissions, " ", quote(f.Path), "\n")
				}
			}
		}
	})
	e.section(provisioning.SizeUnits, func() { e.units(p.Units) })
	e.section(provisioning.SizeCommands, func() { e.commands(p) })
	e.section(provisioning.SizeUserData, func() { e.userData(p) })
	e.w("\nnb_say done\n")
}

// userDataDir holds the user's scripts, written where only root reads them.
const userDataDir = "/var/lib/nodeboot/"

// userData appends each user's shell script after the Plan's commands:
// written to a file of its own and run by its "#!" line, so it may be any
// interpreter's; the script stops at its failure as at a command's.
func (e *emitter) userData(p *provisioning.Plan) {
	for i := range p.UserData {
		u := &p.UserData[i]
		content := u.Content
		if !strings.HasSuffix(content, "\n") {
			// A here-document ends with a line break; an interpreter
			// reads a script the same with one more at its end.
			content += "\n"
		}
		file := userDataDir + "userdata-" + itoa(i)
		e.w("\n# userData[", itoa(i), "]: ", string(u.Type), ", after the Plan's commands\n")
		e.w("nb_file ", quote(file), " 0700 write text")
		e.heredoc(content)
		e.w("nb_script ", quote(p.UserDataPath(i).String()), " ", quote(file), "\n")
	}
}

// needs lists the tools the script calls besides POSIX utilities, so it
// fails before it changes anything on an image that lacks one.
func needs(p *provisioning.Plan) []string {
	var b64, gz, chown bool
	for i := range p.Files {
		f := &p.Files[i]
		switch {
		case f.Encoding == provisioning.EncodingGzip || f.Encoding == provisioning.EncodingGzipBase64:
			b64, gz = true, true
		case f.Encoding == provisioning.EncodingBase64 || !textSafe(f.Content) && f.Content != "":
			b64 = true
		}
		chown = chown || f.Owner != ""
	}
	for i := range p.Units {
		// Unit files and drop-ins are written as files are (units).
		u := &p.Units[i]
		b64 = b64 || !textSafe(u.Contents) && u.Contents != ""
		for _, d := range u.DropIns {
			b64 = b64 || !textSafe(d.Contents) && d.Contents != ""
		}
	}
	var out []string
	if b64 {
		out = append(out, "base64")
	}
	if gz {
		out = append(out, "gzip")
	}
	if len(p.Users) > 0 {
		out = append(out, "getent", "groupadd", "useradd", "usermod", "id", "cut")
		chown = true
		for i := range p.Users {
			if p.Users[i].Passwd != "" {
				out = append(out, "chpasswd")
				break
			}
		}
	}
	if chown {
		out = append(out, "chown")
	}
	return out
}

// file writes one file. Plain text ending in a newline travels verbatim;
// anything else as base64, decoded on the node by base64(1) (and gzip(1)
// for gzip encodings), so the bytes on disk are exactly the Plan's.
func (e *emitter) file(f *provisioning.File) {
	mode := fileMode(f)
	how := "write"
	if f.Append != nil && *f.Append {
		how = "append"
	}
	var kind, body string
	switch f.Encoding {
	case provisioning.EncodingBase64, provisioning.EncodingGzipBase64:
		// check proved it decodes.
		raw, _ := decode64(f.Content)
		kind, body = "base64", wrap64(raw)
		if f.Encoding == provisioning.EncodingGzipBase64 {
			kind = "gzip"
		}
	case provisioning.EncodingGzip:
		kind, body = "gzip", wrap64([]byte(f.Content))
	default:
		if textSafe(f.Content) || f.Content == "" {
			kind, body = "text", f.Content
		} else {
			kind, body = "base64", wrap64([]byte(f.Content))
		}
	}
	e.w("nb_file ", quote(f.Path), " ", mode, " ", how, " ", kind)
	e.heredoc(body)
}

// fileMode is the mode f gets: its Permissions, 0644 when empty.
func fileMode(f *provisioning.File) string {
	if f.Permissions == "" {
		return defaultMode
	}
	return f.Permissions
}

// heredoc ends the current line with stdin from body: a quoted
// here-document, or /dev/null for an empty body.
func (e *emitter) heredoc(body string) {
	if body == "" {
		e.w(" </dev/null\n")
		return
	}
	d := heredocDelim(body)
	e.w(" <<'", d, "'\n", body, d, "\n")
}

func (e *emitter) users(us []provisioning.User) {
	var sudo strings.Builder
	for i := range us {
		u := &us[i]
		name := quote(u.Name)
		e.w("\n# users[", itoa(i), "]\n")
		groups := splitGroups(u.Groups)
		if u.PrimaryGroup != "" {
			e.w("nb_group ", quote(u.PrimaryGroup), "\n")
		}
		for _, g := range groups {
			e.w("nb_group ", quote(g), "\n")
		}
		// An existing account (root, or one the image ships) is kept as it
		// is, as cloud-init does, and only joins the groups.
		e.w("if id -u ", name, " >/dev/null 2>&1; then\n\tnb_say 'users[", itoa(i), "] exists, not created'\n")
		if len(groups) > 0 {
			e.w("\tusermod -a -G ", quote(strings.Join(groups, ",")), " ", name, "\n")
		}
		e.w("else\n\tuseradd -m")
		for _, o := range []struct{ flag, v string }{{"-c", u.Gecos}, {"-d", u.HomeDir}, {"-s", u.Shell}, {"-g", u.PrimaryGroup}} {
			if o.v != "" {
				e.w(" ", o.flag, " ", quote(o.v))
			}
		}
		if len(groups) > 0 {
			e.w(" -G ", quote(strings.Join(groups, ",")))
		}
		e.w(" ", name, "\nfi\n")
		if u.Passwd != "" {
			// printf is a shell builtin: the hash never shows in a process list.
			e.w("printf '%s:%s\\n' ", name, " ", quote(u.Passwd), " | chpasswd -e\n")
		}
		if u.LockPassword == nil || *u.LockPassword {
			// cloud-init's lock_passwd defaults to true.
			e.w("usermod -L ", name, "\n")
		}
		if u.Inactive != nil && *u.Inactive {
			// An account that expired in 1970 cannot log in, which is what
			// cloud-init's inactive means.
			e.w("usermod --expiredate 1 ", name, "\n")
		}
		if len(u.SSHAuthorizedKeys) > 0 {
			e.w("nb_keys ", name)
			e.heredoc(strings.Join(u.SSHAuthorizedKeys, "\n") + "\n")
		}
		if u.Sudo != "" {
			sudo.WriteString(u.Name + " " + u.Sudo + "\n")
		}
	}
	if sudo.Len() > 0 {
		e.w("\n# sudo rules, checked by visudo where it is installed\n")
		e.w("nb_file ", quote(sudoersNew), " 0440 write text")
		e.heredoc(sudo.String())
		e.w("if command -v visudo >/dev/null 2>&1; then visudo -cq -f ", quote(sudoersNew), "; fi\n")
		e.w("mv ", quote(sudoersNew), " ", quote(sudoersFile), "\n")
	}
}

// splitGroups turns "docker, wheel" into its names, as cloud-init reads
// the comma-separated list.
func splitGroups(s string) []string {
	var out []string
	for _, g := range strings.Split(s, ",") {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return out
}

func (e *emitter) units(us []provisioning.Unit) {
	if len(us) == 0 {
		return
	}
	for i := range us {
		u := &us[i]
		e.w("\n# units[", itoa(i), "]\n")
		if u.Contents != "" {
			e.file(&provisioning.File{Path: provisioning.UnitFile(u.Name), Content: u.Contents})
		}
		for _, d := range u.DropIns {
			e.file(&provisioning.File{Path: provisioning.DropInFile(u.Name, d.Name), Content: d.Contents})
		}
	}
	e.w("\nnb_units\n")
	for i := range us {
		// Enabled nil leaves the unit as the image has it, restarted if it
		// runs, so that its drop-ins take effect (cloud-init's dialect does
		// the same with systemctl try-restart).
		verb := "try-restart"
		if en := us[i].Enabled; en != nil {
			verb = "disable"
			if *en {
				verb = "enable"
			}
		}
		e.w("nb_unit ", verb, " ", quote(us[i].Name), "\n")
	}
}

func (e *emitter) commands(p *provisioning.Plan) {
	for _, phase := range []provisioning.Phase{provisioning.PhasePre, provisioning.PhaseBootstrap, provisioning.PhasePost} {
		if phase == provisioning.PhaseBootstrap {
			e.starts(p.Units)
		}
		for i := range p.Commands {
			c := &p.Commands[i]
			if c.Phase != phase {
				continue
			}
			e.w("\n# commands[", itoa(i), "]: ", phase.String(), "\n")
			e.run(p.CommandPath(i).String(), c.Script)
			if phase == provisioning.PhaseBootstrap && p.Sentinel != "" {
				e.w("nb_file ", quote(p.Sentinel), " 0644 write text")
				e.heredoc("success\n")
			}
		}
	}
}

// starts (re)starts the enabled units once the pre commands, which may
// install their binaries, ran: what the Plan's Unit.Enabled means.
func (e *emitter) starts(us []provisioning.Unit) {
	for i := range us {
		if en := us[i].Enabled; en != nil && *en {
			e.w("nb_start ", quote(us[i].Name), "\n")
		}
	}
}

func (e *emitter) run(label, script string) {
	e.w("nb_run ", quote(label), " ", quote(script), "\n")
}

func itoa(i int) string { return strconv.Itoa(i) }
