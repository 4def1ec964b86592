package legacy

import (
	"strings"
	"sync"

	ctypes "github.com/flatcar/container-linux-config-transpiler/config/types"
	ign23types "github.com/flatcar/ignition/config/v2_3/types"
	"github.com/flatcar/ignition/config/validate/report"

	"github.com/nodeboot/nodeboot/provisioning/ignition/internal/units"
)

// CABPK gets its Ignition 2.3 config by transpiling the CLC it templated
// (container-linux-config-transpiler's Convert) and validating the result by
// reflection over every field. The legacy builder's CLC uses a small part of
// the CLC language, so legacyIgnition converts that part directly, as the
// transpiler's converters do, and validateLegacy calls the same validation
// methods Ignition's reflective walk would call on those nodes.
// TestLegacyConvertMatchesTranspiler keeps the transpiler as the oracle:
// the same config and the same verdict over the vectors and a generated
// corpus.

// legacyIgnition is the transpiler's Convert for the CLC legacyBuilder
// builds: users, units, disks with whole-disk partitions, filesystems with
// a mount, and files with inline contents.
func legacyIgnition(in *ctypes.Config) ign23types.Config {
	out := ign23types.Config{Ignition: ign23types.Ignition{Version: "2.3.0"}}
	for _, d := range in.Storage.Disks {
		nd := ign23types.Disk{Device: d.Device, WipeTable: d.WipeTable}
		for _, p := range d.Partitions {
			nd.Partitions = append(nd.Partitions, ign23types.Partition{Label: p.Label, Number: p.Number, GUID: p.GUID, TypeGUID: p.TypeGUID})
		}
		out.Storage.Disks = append(out.Storage.Disks, nd)
	}
	if len(in.Storage.Files) > 0 {
		out.Storage.Files = make([]ign23types.File, 0, len(in.Storage.Files))
	}
	for _, f := range in.Storage.Files {
		nf := ign23types.File{
			Node:          ign23types.Node{Filesystem: f.Filesystem, Path: f.Path, Overwrite: f.Overwrite},
			FileEmbedded1: ign23types.FileEmbedded1{Mode: f.Mode, Append: f.Append},
		}
		if nf.Mode == nil {
			nf.Mode = ptrTo(ctypes.DefaultFileMode)
		}
		if nf.Filesystem == "" {
			nf.Filesystem = "root"
		}
		if f.User != nil {
			nf.User = &ign23types.NodeUser{ID: f.User.Id, Name: f.User.Name}
		}
		if f.Group != nil {
			nf.Group = &ign23types.NodeGroup{ID: f.Group.Id, Name: f.Group.Name}
		}
		nf.Contents.Source = legacyDataURL(f.Contents.Inline)
		out.Storage.Files = append(out.Storage.Files, nf)
	}
	for _, fs := range in.Storage.Filesystems {
		nfs := ign23types.Filesystem{Name: fs.Name, Path: fs.Path}
		if m := fs.Mount; m != nil {
			nfs.Mount = &ign23types.Mount{Device: m.Device, Format: m.Format, WipeFilesystem: m.WipeFilesystem, Label: m.Label, UUID: m.UUID}
			for _, o := range m.Options {
				nfs.Mount.Options = append(nfs.Mount.Options, ign23types.MountOption(o))
			}
		}
		out.Storage.Filesystems = append(out.Storage.Filesystems, nfs)
	}
	for _, u := range in.Passwd.Users {
		nu := ign23types.PasswdUser{
			Name: u.Name, PasswordHash: u.PasswordHash, UID: u.UID, Gecos: u.Gecos, HomeDir: u.HomeDir,
			NoCreateHome: u.NoCreateHome, PrimaryGroup: u.PrimaryGroup, NoUserGroup: u.NoUserGroup,
			System: u.System, NoLogInit: u.NoLogInit, Shell: u.Shell,
		}
		for _, k := range u.SSHAuthorizedKeys {
			nu.SSHAuthorizedKeys = append(nu.SSHAuthorizedKeys, ign23types.SSHAuthorizedKey(k))
		}
		for _, g := range u.Groups {
			nu.Groups = append(nu.Groups, ign23types.Group(g))
		}
		out.Passwd.Users = append(out.Passwd.Users, nu)
	}
	out.Systemd.Units = legacyUnits(in.Systemd.Units)
	return out
}

// legacyDataURL is the transpiler's inline contents as a data: URL:
// dataurl.EscapeString (RFC 2396's unreserved characters stay, every other
// byte is %XX), without its per-byte fmt.Fprintf. Runs of unreserved bytes
// are copied whole into a builder of the exact size, which hands over its
// buffer without another copy.
func legacyDataURL(s string) string {
	n := len("data:,") + len(s)
	for i := 0; i < len(s); i++ {
		n += 2 * int(escaped[s[i]])
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString("data:,")
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; escaped[c] != 0 {
			b.WriteString(s[start:i])
			b.WriteString(percentEscapes[c])
			start = i + 1
		}
	}
	b.WriteString(s[start:])
	return b.String()
}

// percentEscapes[c] is "%XX" for byte c.
var percentEscapes = func() (t [256]string) {
	const hex = "0123456789ABCDEF"
	for c := range t {
		t[c] = string([]byte{'%', hex[c>>4], hex[c&15]})
	}
	return t
}()

// escaped[c] is 1 for the bytes dataurl.Escape writes as %XX: all but RFC
// 2396's unreserved characters.
var escaped = func() (t [256]uint8) {
	for c := range t {
		t[c] = 1
	}
	for _, c := range []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'()") {
		t[c] = 0
	}
	return t
}()

// emptyGUID is Ignition's verdict on an unset partition GUID, which its
// validateGUID reaches by compiling a regular expression on every call.
var emptyGUID = sync.OnceValue(func() report.Report { return ign23types.Partition{}.ValidateGUID() })

func validateGUID(r *report.Report, p *ign23types.Partition) {
	for _, g := range []string{p.TypeGUID, p.GUID} {
		if g == "" {
			r.Merge(emptyGUID())
		} else {
			r.Merge(ign23types.Partition{GUID: g}.ValidateGUID())
		}
	}
}

// validateLegacy is what CABPK's strict conversion checks on its own CLC
// (the transpiler's validation of the CLC, then Ignition's of the
// converted config), for the nodes legacyBuilder builds. CABPK fails on any
// entry, so the entries' order and positions do not matter. Unit contents
// quickUnit reads are not lexed by go-systemd (quickUnit answers as it
// would), and the data: URLs are not decoded again: legacyDataURL escapes
// every byte that is not unreserved, which always decodes (FuzzDataURL).
func validateLegacy(in *ctypes.Config, out *ign23types.Config) report.Report {
	var r report.Report
	r.Merge(in.ValidateVersion())
	for i := range in.Storage.Files {
		r.Merge(in.Storage.Files[i].ValidateMode())
		r.Merge(in.Storage.Files[i].Contents.Validate())
	}
	r.Merge(out.Validate())
	r.Merge(out.Ignition.Validate())
	for _, d := range out.Storage.Disks {
		r.Merge(d.Validate())
		r.Merge(d.ValidateDevice())
		r.Merge(d.ValidatePartitions())
		for _, p := range d.Partitions {
			r.Merge(p.Validate())
			r.Merge(p.ValidateSize())
			r.Merge(p.ValidateStart())
			r.Merge(p.ValidateLabel())
			validateGUID(&r, &p)
		}
	}
	for _, f := range out.Storage.Files {
		r.Merge(f.Validate())
		r.Merge(f.ValidateFilesystem())
		r.Merge(f.ValidatePath())
		r.Merge(f.ValidateMode())
		if f.User != nil {
			r.Merge(f.User.Validate())
		}
		if f.Group != nil {
			r.Merge(f.Group.Validate())
		}
		r.Merge(f.Contents.ValidateCompression())
		r.Merge(f.Contents.Verification.Validate())
	}
	for _, fs := range out.Storage.Filesystems {
		r.Merge(fs.Validate())
		r.Merge(fs.ValidatePath())
		if m := fs.Mount; m != nil {
			r.Merge(m.Validate())
			r.Merge(m.ValidateDevice())
			r.Merge(m.ValidateLabel())
		}
	}
	for _, u := range out.Passwd.Users {
		r.Merge(u.Validate())
	}
	for _, u := range out.Systemd.Units {
		enabled := u.Enable || (u.Enabled != nil && *u.Enabled)
		if clean, known := quickUnitClean(&u); !(clean && known) && !cleanUnits.Has(units.Key{Name: u.Name, Enabled: enabled, Contents: u.Contents}) {
			rep := u.ValidateContents()
			if len(rep.Entries) == 0 {
				cleanUnits.Add(units.Key{Name: u.Name, Enabled: enabled, Contents: u.Contents})
			}
			r.Merge(rep)
		}
		r.Merge(u.ValidateName())
		for _, d := range u.Dropins {
			if clean, known := quickDropinClean(&d); !(clean && known) {
				r.Merge(d.Validate())
			}
		}
	}
	return r
}

// appendLegacy is ign23.Append(old, user) for the 2.3 types, without its
// reflective walk: lists are appended, ignition.config is the user's,
// ignition.version stays, and a timeout the user sets wins.
func appendLegacy(old, user *ign23types.Config) ign23types.Config {
	out := *old
	ign := &out.Ignition
	ign.Config = user.Ignition.Config
	ign.Security.TLS.CertificateAuthorities = append(ign.Security.TLS.CertificateAuthorities, user.Ignition.Security.TLS.CertificateAuthorities...)
	if t := user.Ignition.Timeouts.HTTPResponseHeaders; t != nil {
		ign.Timeouts.HTTPResponseHeaders = t
	}
	if t := user.Ignition.Timeouts.HTTPTotal; t != nil {
		ign.Timeouts.HTTPTotal = t
	}
	out.Networkd.Units = append(out.Networkd.Units, user.Networkd.Units...)
	out.Passwd.Groups = append(out.Passwd.Groups, user.Passwd.Groups...)
	out.Passwd.Users = append(out.Passwd.Users, user.Passwd.Users...)
	s, u := &out.Storage, &user.Storage
	s.Directories = append(s.Directories, u.Directories...)
	s.Disks = append(s.Disks, u.Disks...)
	s.Files = append(s.Files, u.Files...)
	s.Filesystems = append(s.Filesystems, u.Filesystems...)
	s.Links = append(s.Links, u.Links...)
	s.Raid = append(s.Raid, u.Raid...)
	out.Systemd.Units = append(out.Systemd.Units, user.Systemd.Units...)
	return out
}

// legacyUnits converts CLC units as the transpiler does: field for field.
func legacyUnits(units []ctypes.SystemdUnit) []ign23types.Unit {
	var out []ign23types.Unit
	for _, u := range units {
		nu := ign23types.Unit{Name: u.Name, Enable: u.Enable, Enabled: u.Enabled, Mask: u.Mask, Contents: u.Contents}
		for _, d := range u.Dropins {
			nu.Dropins = append(nu.Dropins, ign23types.SystemdDropin{Name: d.Name, Contents: d.Contents})
		}
		out = append(out, nu)
	}
	return out
}

// cleanUnits remembers the units Ignition 2.3's validator passed without a
// finding.
var cleanUnits units.CleanSet
