package legacy

import (
	"strconv"
	"unicode/utf8"

	ign23types "github.com/flatcar/ignition/config/v2_3/types"
)

// CABPK serialises its Ignition 2.3 config with json.Marshal, and the legacy
// dialect must write the same bytes. encoding/json finds each field by
// reflection; legacyJSON writes the same document directly, for every field
// of the 2.3 types (the user's additional config can set any of them), in
// encoding/json's order and with its rules: fields in declaration order
// with embedded structs flattened, omitempty dropping false, 0, "", nil and
// empty lists but never a struct, a nil list without omitempty written as
// null, and strings escaped as json.Marshal escapes them (HTML characters,
// invalid UTF-8, U+2028 and U+2029 included). TestLegacyJSONMatchesEncoding
// compares it with json.Marshal over generated configs.

// jsonWriter appends one JSON document; comma tracks whether the current
// object or array already has a member.
type jsonWriter struct {
	b     []byte
	comma bool
}

func (w *jsonWriter) open(c byte)  { w.b = append(w.b, c); w.comma = false }
func (w *jsonWriter) close(c byte) { w.b = append(w.b, c); w.comma = true }

// key starts a member: the separator, the name and the colon.
func (w *jsonWriter) key(k string) {
	if w.comma {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
	w.comma = false
}

// elem starts an array element.
func (w *jsonWriter) elem() {
	if w.comma {
		w.b = append(w.b, ',')
	}
	w.comma = false
}

func (w *jsonWriter) str(s string) { w.b = appendJSONString(w.b, s); w.comma = true }

func (w *jsonWriter) int(v int) { w.b = strconv.AppendInt(w.b, int64(v), 10); w.comma = true }

func (w *jsonWriter) bool(v bool) { w.b = strconv.AppendBool(w.b, v); w.comma = true }

// The omitempty fields.
func (w *jsonWriter) optStr(k, v string) {
	if v != "" {
		w.key(k)
		w.str(v)
	}
}

func (w *jsonWriter) optStrPtr(k string, v *string) {
	if v != nil {
		w.key(k)
		w.str(*v)
	}
}

func (w *jsonWriter) optIntPtr(k string, v *int) {
	if v != nil {
		w.key(k)
		w.int(*v)
	}
}

func (w *jsonWriter) optBool(k string, v bool) {
	if v {
		w.key(k)
		w.bool(true)
	}
}

func (w *jsonWriter) optBoolPtr(k string, v *bool) {
	if v != nil {
		w.key(k)
		w.bool(*v)
	}
}

// strs writes a list of strings; omit: omitempty.
func strs[S ~string](w *jsonWriter, k string, vs []S, omit bool) {
	if omit && len(vs) == 0 {
		return
	}
	w.key(k)
	if vs == nil {
		w.b = append(w.b, "null"...)
		w.comma = true
		return
	}
	w.open('[')
	for _, v := range vs {
		w.elem()
		w.str(string(v))
	}
	w.close(']')
}

// list writes an omitempty list of objects, each by one.
func list[T any](w *jsonWriter, k string, vs []T, one func(*jsonWriter, *T)) {
	if len(vs) == 0 {
		return
	}
	w.key(k)
	w.open('[')
	for i := range vs {
		w.elem()
		w.open('{')
		one(w, &vs[i])
		w.close('}')
	}
	w.close(']')
}

// legacyJSON is json.Marshal(cfg).
func legacyJSON(cfg *ign23types.Config) []byte { return legacyJSONFrom(cfg, 0) }

// legacyJSONFrom is json.Marshal(cfg) when the first dataURLs files'
// sources come from legacyDataURL: those are written as they are, because
// every byte legacyDataURL writes is one JSON writes unescaped
// (TestDataURLIsJSONSafe).
func legacyJSONFrom(cfg *ign23types.Config, dataURLs int) []byte {
	w := &jsonWriter{b: make([]byte, 0, legacyJSONSize(cfg))}
	w.open('{')
	w.key("ignition")
	w.open('{')
	ign := &cfg.Ignition
	w.key("config")
	w.open('{')
	list(w, "append", ign.Config.Append, configReference)
	if r := ign.Config.Replace; r != nil {
		w.key("replace")
		w.open('{')
		configReference(w, r)
		w.close('}')
	}
	w.close('}')
	w.key("security")
	w.open('{')
	w.key("tls")
	w.open('{')
	list(w, "certificateAuthorities", ign.Security.TLS.CertificateAuthorities, func(w *jsonWriter, c *ign23types.CaReference) {
		w.key("source")
		w.str(c.Source)
		verification(w, &c.Verification)
	})
	w.close('}')
	w.close('}')
	w.key("timeouts")
	w.open('{')
	w.optIntPtr("httpResponseHeaders", ign.Timeouts.HTTPResponseHeaders)
	w.optIntPtr("httpTotal", ign.Timeouts.HTTPTotal)
	w.close('}')
	w.optStr("version", ign.Version)
	w.close('}')

	w.key("networkd")
	w.open('{')
	list(w, "units", cfg.Networkd.Units, func(w *jsonWriter, u *ign23types.Networkdunit) {
		w.optStr("contents", u.Contents)
		list(w, "dropins", u.Dropins, func(w *jsonWriter, d *ign23types.NetworkdDropin) {
			w.optStr("contents", d.Contents)
			w.key("name")
			w.str(d.Name)
		})
		w.key("name")
		w.str(u.Name)
	})
	w.close('}')

	w.key("passwd")
	w.open('{')
	list(w, "groups", cfg.Passwd.Groups, func(w *jsonWriter, g *ign23types.PasswdGroup) {
		w.optIntPtr("gid", g.Gid)
		w.key("name")
		w.str(g.Name)
		w.optStr("passwordHash", g.PasswordHash)
		w.optBool("system", g.System)
	})
	list(w, "users", cfg.Passwd.Users, passwdUser)
	w.close('}')

	w.key("storage")
	w.open('{')
	s := &cfg.Storage
	list(w, "directories", s.Directories, func(w *jsonWriter, d *ign23types.Directory) {
		node(w, &d.Node)
		w.optIntPtr("mode", d.Mode)
	})
	list(w, "disks", s.Disks, func(w *jsonWriter, d *ign23types.Disk) {
		w.key("device")
		w.str(d.Device)
		list(w, "partitions", d.Partitions, partition)
		w.optBool("wipeTable", d.WipeTable)
	})
	file := 0
	list(w, "files", s.Files, func(w *jsonWriter, f *ign23types.File) {
		node(w, &f.Node)
		w.optBool("append", f.Append)
		w.key("contents")
		w.open('{')
		w.optStr("compression", f.Contents.Compression)
		if file < dataURLs && f.Contents.Source != "" {
			w.key("source")
			w.b = append(append(append(w.b, '"'), f.Contents.Source...), '"')
			w.comma = true
		} else {
			w.optStr("source", f.Contents.Source)
		}
		file++
		verification(w, &f.Contents.Verification)
		w.close('}')
		w.optIntPtr("mode", f.Mode)
	})
	list(w, "filesystems", s.Filesystems, filesystem)
	list(w, "links", s.Links, func(w *jsonWriter, l *ign23types.Link) {
		node(w, &l.Node)
		w.optBool("hard", l.Hard)
		w.key("target")
		w.str(l.Target)
	})
	list(w, "raid", s.Raid, func(w *jsonWriter, r *ign23types.Raid) {
		strs(w, "devices", r.Devices, false)
		w.key("level")
		w.str(r.Level)
		w.key("name")
		w.str(r.Name)
		strs(w, "options", r.Options, true)
		if r.Spares != 0 {
			w.key("spares")
			w.int(r.Spares)
		}
	})
	w.close('}')

	w.key("systemd")
	w.open('{')
	list(w, "units", cfg.Systemd.Units, func(w *jsonWriter, u *ign23types.Unit) {
		w.optStr("contents", u.Contents)
		list(w, "dropins", u.Dropins, func(w *jsonWriter, d *ign23types.SystemdDropin) {
			w.optStr("contents", d.Contents)
			w.key("name")
			w.str(d.Name)
		})
		w.optBool("enable", u.Enable)
		w.optBoolPtr("enabled", u.Enabled)
		w.optBool("mask", u.Mask)
		w.key("name")
		w.str(u.Name)
	})
	w.close('}')
	w.close('}')
	return w.b
}

func configReference(w *jsonWriter, c *ign23types.ConfigReference) {
	w.key("source")
	w.str(c.Source)
	verification(w, &c.Verification)
}

func verification(w *jsonWriter, v *ign23types.Verification) {
	w.key("verification")
	w.open('{')
	w.optStrPtr("hash", v.Hash)
	w.close('}')
}

func node(w *jsonWriter, n *ign23types.Node) {
	w.key("filesystem")
	w.str(n.Filesystem)
	if g := n.Group; g != nil {
		w.key("group")
		w.open('{')
		w.optIntPtr("id", g.ID)
		w.optStr("name", g.Name)
		w.close('}')
	}
	w.optBoolPtr("overwrite", n.Overwrite)
	w.key("path")
	w.str(n.Path)
	if u := n.User; u != nil {
		w.key("user")
		w.open('{')
		w.optIntPtr("id", u.ID)
		w.optStr("name", u.Name)
		w.close('}')
	}
}

func passwdUser(w *jsonWriter, u *ign23types.PasswdUser) {
	if c := u.Create; c != nil {
		w.key("create")
		w.open('{')
		w.optStr("gecos", c.Gecos)
		strs(w, "groups", c.Groups, true)
		w.optStr("homeDir", c.HomeDir)
		w.optBool("noCreateHome", c.NoCreateHome)
		w.optBool("noLogInit", c.NoLogInit)
		w.optBool("noUserGroup", c.NoUserGroup)
		w.optStr("primaryGroup", c.PrimaryGroup)
		w.optStr("shell", c.Shell)
		w.optBool("system", c.System)
		w.optIntPtr("uid", c.UID)
		w.close('}')
	}
	w.optStr("gecos", u.Gecos)
	strs(w, "groups", u.Groups, true)
	w.optStr("homeDir", u.HomeDir)
	w.key("name")
	w.str(u.Name)
	w.optBool("noCreateHome", u.NoCreateHome)
	w.optBool("noLogInit", u.NoLogInit)
	w.optBool("noUserGroup", u.NoUserGroup)
	w.optStrPtr("passwordHash", u.PasswordHash)
	w.optStr("primaryGroup", u.PrimaryGroup)
	strs(w, "sshAuthorizedKeys", u.SSHAuthorizedKeys, true)
	w.optStr("shell", u.Shell)
	w.optBool("system", u.System)
	w.optIntPtr("uid", u.UID)
}

func partition(w *jsonWriter, p *ign23types.Partition) {
	w.optStr("guid", p.GUID)
	w.optStrPtr("label", p.Label)
	if p.Number != 0 {
		w.key("number")
		w.int(p.Number)
	}
	w.optBoolPtr("shouldExist", p.ShouldExist)
	w.optIntPtr("size", p.Size)
	w.optIntPtr("sizeMiB", p.SizeMiB)
	w.optIntPtr("start", p.Start)
	w.optIntPtr("startMiB", p.StartMiB)
	w.optStr("typeGuid", p.TypeGUID)
	w.optBool("wipePartitionEntry", p.WipePartitionEntry)
}

func filesystem(w *jsonWriter, f *ign23types.Filesystem) {
	if m := f.Mount; m != nil {
		w.key("mount")
		w.open('{')
		if c := m.Create; c != nil {
			w.key("create")
			w.open('{')
			w.optBool("force", c.Force)
			strs(w, "options", c.Options, true)
			w.close('}')
		}
		w.key("device")
		w.str(m.Device)
		w.key("format")
		w.str(m.Format)
		w.optStrPtr("label", m.Label)
		strs(w, "options", m.Options, true)
		w.optStrPtr("uuid", m.UUID)
		w.optBool("wipeFilesystem", m.WipeFilesystem)
		w.close('}')
	}
	w.optStr("name", f.Name)
	w.optStrPtr("path", f.Path)
}

// legacyJSONSize is a close upper estimate of the document's size, so that
// its buffer is allocated once: the file sources, which are most of it, and
// a margin for the rest.
func legacyJSONSize(cfg *ign23types.Config) int {
	n := 1024
	for i := range cfg.Storage.Files {
		n += len(cfg.Storage.Files[i].Contents.Source) + len(cfg.Storage.Files[i].Path) + 128
	}
	for i := range cfg.Systemd.Units {
		n += len(cfg.Systemd.Units[i].Contents)*6/5 + 128
	}
	return n
}

// appendJSONString is encoding/json's string encoding with HTML escaping, as
// json.Marshal writes it.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonSafe: the ASCII bytes json.Marshal writes as they are.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
