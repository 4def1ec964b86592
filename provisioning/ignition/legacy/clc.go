package legacy

import (
	_ "embed"
	"path"
	"strings"

	ctypes "github.com/flatcar/container-linux-config-transpiler/config/types"
	ign23types "github.com/flatcar/ignition/config/v2_3/types"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// Layout of CABPK's Container Linux Config, which the legacy dialect builds as
// typed values, in output order:
//
//   - passwd.users: name, gecos, groups (the Plan's string split at ", "),
//     home_dir, shell, password_hash, primary_group, ssh_authorized_keys; each
//     value read as a YAML plain scalar where the template writes it, a group
//     or key read as null dropped.
//   - systemd.units: kubeadm.service (enabled, assets/legacy-kubeadm.service);
//     ntpd.service enabled when ntp.enabled is set; one enabled mount unit per
//     Plan mount, named from the mount point with "/" turned into "-", whose
//     What= is the device of the diskSetup filesystem labelled by the mount's
//     first field and whose Options= joins every field after the mount point.
//   - storage.disks: device, wipe_table from overwrite, one whole-disk
//     partition when layout is set; storage.filesystems: name and label from
//     the label, device, format, wipe_filesystem from overwrite, options.
//   - storage.files: /etc/sudoers.d/NAME (0600) per user with sudo, then
//     /etc/ssh/sshd_config (0600) when a user has lockPassword: false, then
//     the Plan's files (owner split as CABPK's parseOwner does), /etc/kubeadm.sh
//     (0700), the bootstrap input, and /etc/ntp.conf (0644) when ntp is enabled
//     with servers. File contents are read as literal blocks (clcBlock), the
//     values in generated files placed as the template places them; base64
//     contents are decoded.
//
// The script runs the pre commands, the bootstrap command, writes the
// sentinel, moves the bootstrap input to /tmp (so the unit runs once) and runs
// the post commands. Plans without a bootstrap input, and the Plan's own
// units, are laid out as units.go describes; neither occurs in a
// KubeadmConfig's Plan.

const (
	legacyScriptPath = "/etc/kubeadm.sh"
	legacyInputPath  = "/etc/kubeadm.yml"
	legacyUnitName   = "kubeadm.service"
	legacyNTPUnit    = "ntpd.service"
	legacySudoersDir = "/etc/sudoers.d/"
	legacySSHDConfig = "/etc/ssh/sshd_config"
	legacyNTPConf    = "/etc/ntp.conf"
)

var (
	//go:embed assets/legacy-kubeadm.service
	legacyUnit string
	//go:embed assets/legacy-sshd_config
	legacySSHDHeader string
	//go:embed assets/legacy-ntp.conf-tail
	legacyNTPTail string
)

// legacyBuilder turns a Plan into CABPK's CLC, recording every feature the
// dialect drops (errors) or reads differently than written (warnings).
type legacyBuilder struct {
	plan *provisioning.Plan
	ps   provisioning.Problems
	cfg  ctypes.Config
}

func (b *legacyBuilder) build() {
	p := b.plan
	// Sized once: sudoers per user, sshd_config, the Plan's files, the
	// script and ntp.conf; the bootstrap and ntpd units, mounts and units.
	b.cfg.Storage.Files = make([]ctypes.File, 0, len(p.Users)+len(p.Files)+3)
	b.cfg.Systemd.Units = make([]ctypes.SystemdUnit, 0, len(p.Mounts)+len(p.Units)+2)
	b.checkUnsupported()
	for i := range p.Users {
		b.user(i, &p.Users[i])
	}
	b.bootstrapUnit()
	if p.NTP != nil && p.NTP.Enabled != nil {
		b.cfg.Systemd.Units = append(b.cfg.Systemd.Units, ctypes.SystemdUnit{Name: legacyNTPUnit, Enabled: ptrTo(true)})
	}
	b.mounts()
	b.units()
	b.disks()
	for i := range p.Users {
		u := &p.Users[i]
		if u.Sudo != "" {
			pp := func(field string) provisioning.Path { return provisioning.FieldPath(u.Origin, p.UserPath(i), field) }
			blk := fileBlock()
			blk.value(pp("name"), u.Name, false)
			blk.text(" ")
			blk.value(pp("sudo"), u.Sudo, false)
			path := b.plain(slotFilePath, pp("name"), legacySudoersDir+u.Name)
			b.cfg.Storage.Files = append(b.cfg.Storage.Files, b.generatedFile(path, 0o600, &blk))
		}
	}
	var pwAuth []int
	for i := range p.Users {
		if u := &p.Users[i]; u.LockPassword != nil && !*u.LockPassword {
			pwAuth = append(pwAuth, i)
		}
	}
	if len(pwAuth) > 0 {
		blk := fileBlock()
		blk.text(legacySSHDHeader + "Match User ")
		for j, i := range pwAuth {
			if j > 0 {
				blk.text(",")
			}
			u := &p.Users[i]
			blk.value(p.UserPath(i).Member("name"), u.Name, false)
		}
		blk.text("\n  PasswordAuthentication yes")
		b.cfg.Storage.Files = append(b.cfg.Storage.Files, b.generatedFile(legacySSHDConfig, 0o600, &blk))
	}
	for i := range p.Files {
		if !p.Files[i].BootstrapInput {
			b.file(i, &p.Files[i])
		}
	}
	b.bootstrapScript()
	for i := range p.Files {
		if p.Files[i].BootstrapInput {
			b.file(i, &p.Files[i])
		}
	}
	if n := p.NTP; n != nil && n.Enabled != nil && len(n.Servers) > 0 {
		blk := fileBlock()
		blk.after = "\n"
		blk.text("# Common pool")
		for i, s := range n.Servers {
			blk.text("\nserver ")
			blk.value(p.SectionPath(provisioning.SectionNTP).Field("servers").Index(i), s, false)
		}
		blk.text("\n" + strings.TrimSuffix(legacyNTPTail, "\n"))
		b.cfg.Storage.Files = append(b.cfg.Storage.Files, b.generatedFile(legacyNTPConf, 0o644, &blk))
	}
}

// script is /etc/kubeadm.sh as CABPK's template writes it: an empty line
// after "set -e" and around the bootstrap block, and one before the post
// commands; pre and post commands re-indented, the bootstrap command not.
func (b *legacyBuilder) script() clcBlock {
	blk := fileBlock()
	blk.text("#!/bin/bash\nset -e\n")
	for _, c := range b.plan.CommandsIn(provisioning.PhasePre) {
		blk.text("\n")
		blk.value(commandField(c), c.Script, true)
	}
	blk.text("\n\n")
	for _, c := range b.plan.CommandsIn(provisioning.PhaseBootstrap) {
		blk.value(commandField(c), c.Script, false)
		blk.text("\n")
	}
	if sentinel := b.plan.Sentinel; sentinel != "" {
		blk.text("mkdir -p " + path.Dir(sentinel) + " && echo success > " + sentinel + "\n")
	}
	blk.text(b.runOnceLine())
	for _, c := range b.plan.CommandsIn(provisioning.PhasePost) {
		blk.text("\n")
		blk.value(commandField(c), c.Script, true)
	}
	return blk
}

func commandField(c provisioning.Command) provisioning.Path {
	if !c.Origin.IsZero() {
		return c.Origin
	}
	return provisioning.NewPath("commands")
}

func (b *legacyBuilder) user(i int, u *provisioning.User) {
	pp := fieldPaths(u.Origin, "users", i)
	out := ctypes.User{Name: b.plain(slotUserName, pp("name"), u.Name)}
	if u.Gecos != "" {
		out.Gecos = b.plain(slotUserField, pp("gecos"), u.Gecos)
	}
	if u.Groups != "" {
		out.Groups = b.items(func(int) provisioning.Path { return pp("groups") }, strings.Split(u.Groups, ", "), slotUserItem)
	}
	if u.HomeDir != "" {
		out.HomeDir = b.plain(slotUserField, pp("homeDir"), u.HomeDir)
	}
	if u.Shell != "" {
		out.Shell = b.plain(slotUserField, pp("shell"), u.Shell)
	}
	if u.Passwd != "" {
		out.PasswordHash = b.plainPtr(slotUserField, pp("passwd"), u.Passwd)
	}
	if u.PrimaryGroup != "" {
		out.PrimaryGroup = b.plain(slotUserField, pp("primaryGroup"), u.PrimaryGroup)
	}
	keys := func(j int) provisioning.Path { return pp("sshAuthorizedKeys").Index(j) }
	out.SSHAuthorizedKeys = b.items(keys, u.SSHAuthorizedKeys, slotUserItem)
	b.cfg.Passwd.Users = append(b.cfg.Passwd.Users, out)
}

func (b *legacyBuilder) file(i int, f *provisioning.File) {
	pp := fieldPaths(f.Origin, "files", i)
	out := ctypes.File{Path: b.plain(slotFilePath, pp("path"), f.Path)}
	if f.Path != "" && !path.IsAbs(out.Path) {
		// CABPK's transpiler refuses the config, so CABPK fails too.
		b.ps.Errorf(pp("path"), "must be absolute in the legacy %s layout, as YAML reads it (CABPK's Ignition transpiler refuses it too)", ignition.Format)
	}
	if f.Owner != "" {
		// CABPK's parseOwner: the parts before and after the first ":",
		// trimmed; an empty part is unset, a blank one an empty name.
		parts := strings.Split(f.Owner, ":")
		if parts[0] != "" {
			out.User = &ctypes.FileUser{Name: b.plain(slotFileOwner, pp("owner"), strings.TrimSpace(parts[0]))}
		}
		if len(parts) > 1 && parts[1] != "" {
			out.Group = &ctypes.FileGroup{Name: b.plain(slotFileOwner, pp("owner"), strings.TrimSpace(parts[1]))}
		}
	}
	if f.Permissions != "" {
		mode, asMeant, ok := yamlMode(f.Permissions)
		switch {
		case !ok:
			// YAML reads no number where the transpiler wants one, and
			// CABPK fails on it.
			b.ps.Errorf(pp("permissions"), "is not a number, which the legacy %s layout cannot carry (CABPK fails on it too)", ignition.Format)
		case mode == nil:
			b.ps.Errorf(pp("permissions"), "is read as null by the legacy %s layout (a plain YAML value), which cannot write a file without a mode", ignition.Format)
		case !asMeant:
			b.ps.Warnf(pp("permissions"), "is not an octal number with a leading 0, so the legacy layout reads it as a YAML number (decimal without a leading 0) and the file gets another mode than written (write it as 0 and three or four octal digits)")
		}
		out.Mode = mode
	}
	blk := fileBlock()
	if f.Encoding == provisioning.EncodingBase64 {
		blk.before, blk.binary = binaryBlockHead, true
	}
	blk.value(contentField, f.Content, true) // the problems below name the field
	r := blk.read()
	switch {
	case len(r.broken) > 0:
		b.ps.Errorf(pp("content"), "cannot be carried by the legacy %s layout (as a YAML literal block it breaks the YAML CABPK writes: line breaks other than LF, control characters, or its indentation); use base64 encoding", ignition.Format)
	case r.badBase64:
		b.ps.Errorf(pp("content"), "is not valid base64")
	case r.reindented && f.Encoding == provisioning.EncodingNone:
		b.ps.Warnf(pp("content"), "starts with an indented line, so the legacy layout removes that indentation from every line")
	case len(r.changed) > 0:
		b.ps.Warnf(pp("content"), "is changed when read by the legacy layout (a YAML literal block: line breaks other than LF are read as LF)")
	}
	out.Contents.Inline = r.content
	if out.Mode != nil {
		legacyRefused(&b.ps, pp("permissions"), ign23types.File{FileEmbedded1: ign23types.FileEmbedded1{Mode: out.Mode}}.ValidateMode())
	}
	b.cfg.Storage.Files = append(b.cfg.Storage.Files, out)
}

// generatedFile is a file the layout adds; its content is still read as a
// literal block, because user values (sudo rules, NTP servers, commands) are
// in it.
func (b *legacyBuilder) generatedFile(filePath string, mode int, blk *clcBlock) ctypes.File {
	return ctypes.File{Path: filePath, Mode: &mode, Contents: ctypes.FileContents{Inline: b.block(blk)}}
}

// block reads blk as CABPK's YAML does and reports the values that break it
// or are read differently.
func (b *legacyBuilder) block(blk *clcBlock) string {
	r := blk.read()
	for _, f := range r.broken {
		b.ps.Errorf(f, "cannot be carried by the legacy %s layout: placed in a YAML literal block it breaks the YAML CABPK writes (a line break other than a trailing LF, or a control character; CABPK fails on it too)", ignition.Format)
	}
	for _, f := range r.changed {
		b.ps.Warnf(f, "is changed when read by the legacy layout, which places it in a YAML literal block")
	}
	return r.content
}

// read reads v as CABPK's YAML reads it in slot and reports when that
// changes it; null: YAML reads null there. Problems name the field only: the
// value can be a secret.
func (b *legacyBuilder) read(slot *yamlSlot, pp provisioning.Path, v string) (got string, null bool) {
	got, null, ok := slot.read(v)
	switch {
	case !ok:
		b.ps.Errorf(pp, "cannot be written as a plain YAML value, so the legacy %s layout cannot carry it (CABPK fails on it, or reads another configuration)", ignition.Format)
		return v, false
	case null && v != "":
		b.ps.Warnf(pp, "is read as null by the legacy layout, which writes it as a plain YAML value, and dropped")
	case !null && got != v:
		b.ps.Warnf(pp, "is changed when read by the legacy layout, which writes it as a plain YAML value (quotes, comments, anchors, tags, surrounding blanks and line breaks are YAML syntax there)")
	}
	return got, null
}

func (b *legacyBuilder) plain(slot *yamlSlot, pp provisioning.Path, v string) string {
	got, _ := b.read(slot, pp, v)
	return got
}

// plainPtr is plain for an optional field: null leaves it unset.
func (b *legacyBuilder) plainPtr(slot *yamlSlot, pp provisioning.Path, v string) *string {
	if got, null := b.read(slot, pp, v); !null {
		return &got
	}
	return nil
}

// items reads each value as a sequence item in slot; CABPK drops the items
// YAML reads as null.
func (b *legacyBuilder) items(field func(int) provisioning.Path, vs []string, slot *yamlSlot) []string {
	var out []string
	for j, v := range vs {
		if got, null := b.read(slot, field(j), v); !null {
			out = append(out, got)
		}
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

// fieldPaths is provisioning.FieldPath for the fields of list[i], with the
// base built once: every value read names its field, problem or not.
func fieldPaths(origin provisioning.Path, list string, i int) func(field string) provisioning.Path {
	base := origin
	if base.IsZero() {
		base = provisioning.NewPath(list).Index(i)
	}
	return func(field string) provisioning.Path { return provisioning.FieldPath(origin, base, field) }
}

// contentField marks a file's content in its block; problems about it are
// reported at the file's own path.
var contentField = provisioning.NewPath("content")
