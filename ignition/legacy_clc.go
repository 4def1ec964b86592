package ignition

import (
	_ "embed"
	"encoding/base64"
	"fmt"
	"path"
	"strconv"
	"strings"

	ctypes "github.com/flatcar/container-linux-config-transpiler/config/types"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Layout of CABPK's Container Linux Config, which the legacy dialect builds as
// typed values, in output order:
//
//   - passwd.users: name, gecos, groups (the Plan's string split at ", "),
//     home_dir, shell, password_hash, primary_group, ssh_authorized_keys; each
//     value read as a YAML plain scalar.
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
//     the Plan's files, /etc/kubeadm.sh (0700), the bootstrap input, and
//     /etc/ntp.conf (0644) when ntp is enabled with servers. File contents are
//     read as literal blocks; base64 contents are decoded.
//
// The script runs the pre commands, the bootstrap command, writes the
// sentinel, moves the bootstrap input to /tmp (so the unit runs once) and runs
// the post commands.

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
	b.checkUnsupported()
	for i := range p.Users {
		b.user(i, &p.Users[i])
	}
	b.cfg.Systemd.Units = append(b.cfg.Systemd.Units, ctypes.SystemdUnit{Name: legacyUnitName, Enabled: ptrTo(true), Contents: legacyUnit})
	if p.NTP != nil && p.NTP.Enabled != nil {
		b.cfg.Systemd.Units = append(b.cfg.Systemd.Units, ctypes.SystemdUnit{Name: legacyNTPUnit, Enabled: ptrTo(true)})
	}
	b.mounts()
	b.disks()
	for i := range p.Users {
		u := &p.Users[i]
		if u.Sudo != "" {
			pp := provisioning.FieldPath(u.Origin, fmt.Sprintf("users[%d]", i), "sudo")
			b.cfg.Storage.Files = append(b.cfg.Storage.Files, b.generatedFile(pp, legacySudoersDir+u.Name, 0o600, u.Name+" "+u.Sudo))
		}
	}
	var pwAuth []string
	for i := range p.Users {
		if u := &p.Users[i]; u.LockPassword != nil && !*u.LockPassword {
			pwAuth = append(pwAuth, u.Name)
		}
	}
	if len(pwAuth) > 0 {
		content := legacySSHDHeader + "Match User " + strings.Join(pwAuth, ",") + "\n  PasswordAuthentication yes\n"
		b.cfg.Storage.Files = append(b.cfg.Storage.Files, b.generatedFile("users", legacySSHDConfig, 0o600, content))
	}
	for i := range p.Files {
		if !p.Files[i].BootstrapInput {
			b.file(i, &p.Files[i])
		}
	}
	b.cfg.Storage.Files = append(b.cfg.Storage.Files, b.generatedFile("commands", legacyScriptPath, 0o700, b.script()))
	for i := range p.Files {
		if p.Files[i].BootstrapInput {
			b.file(i, &p.Files[i])
		}
	}
	if n := p.NTP; n != nil && n.Enabled != nil && len(n.Servers) > 0 {
		var conf strings.Builder
		conf.WriteString("# Common pool\n")
		for _, s := range n.Servers {
			conf.WriteString("server " + s + "\n")
		}
		conf.WriteString(legacyNTPTail)
		b.cfg.Storage.Files = append(b.cfg.Storage.Files, b.generatedFile("ntp.servers", legacyNTPConf, 0o644, conf.String()))
	}
}

// script is the text of /etc/kubeadm.sh before the literal-block reading:
// the template leaves an empty line after "set -e" and around the bootstrap
// block, and one before the post commands.
func (b *legacyBuilder) script() string {
	var s strings.Builder
	s.WriteString("#!/bin/bash\nset -e\n")
	for _, c := range b.plan.CommandsIn(provisioning.PhasePre) {
		s.WriteString("\n" + c.Script)
	}
	s.WriteString("\n\n")
	for _, c := range b.plan.CommandsIn(provisioning.PhaseBootstrap) {
		s.WriteString(c.Script + "\n")
	}
	if sentinel := b.plan.Sentinel; sentinel != "" {
		s.WriteString("mkdir -p " + path.Dir(sentinel) + " && echo success > " + sentinel + "\n")
	}
	s.WriteString("mv " + legacyInputPath + " /tmp/\n")
	for _, c := range b.plan.CommandsIn(provisioning.PhasePost) {
		s.WriteString("\n" + c.Script)
	}
	return s.String() + "\n"
}

func (b *legacyBuilder) user(i int, u *provisioning.User) {
	pp := func(field string) string { return provisioning.FieldPath(u.Origin, fmt.Sprintf("users[%d]", i), field) }
	out := ctypes.User{Name: b.plain(pp("name"), u.Name)}
	if u.Gecos != "" {
		out.Gecos = b.plain(pp("gecos"), u.Gecos)
	}
	if u.Groups != "" {
		for _, g := range strings.Split(u.Groups, ", ") {
			out.Groups = append(out.Groups, b.plain(pp("groups"), g))
		}
	}
	if u.HomeDir != "" {
		out.HomeDir = b.plain(pp("homeDir"), u.HomeDir)
	}
	if u.Shell != "" {
		out.Shell = b.plain(pp("shell"), u.Shell)
	}
	if u.Passwd != "" {
		out.PasswordHash = b.secretPtr(pp("passwd"), u.Passwd)
	}
	if u.PrimaryGroup != "" {
		out.PrimaryGroup = b.plain(pp("primaryGroup"), u.PrimaryGroup)
	}
	for j, k := range u.SSHAuthorizedKeys {
		out.SSHAuthorizedKeys = append(out.SSHAuthorizedKeys, b.plain(pp(fmt.Sprintf("sshAuthorizedKeys[%d]", j)), k))
	}
	b.cfg.Passwd.Users = append(b.cfg.Passwd.Users, out)
}

func (b *legacyBuilder) file(i int, f *provisioning.File) {
	pp := func(field string) string { return provisioning.FieldPath(f.Origin, fmt.Sprintf("files[%d]", i), field) }
	out := ctypes.File{Path: b.plain(pp("path"), f.Path)}
	if f.Owner != "" {
		user, group, hasGroup := strings.Cut(f.Owner, ":")
		if user = strings.TrimSpace(user); user != "" {
			out.User = &ctypes.FileUser{Name: b.plain(pp("owner"), user)}
		}
		if group, _, _ = strings.Cut(group, ":"); hasGroup && strings.TrimSpace(group) != "" {
			out.Group = &ctypes.FileGroup{Name: b.plain(pp("owner"), strings.TrimSpace(group))}
		}
	}
	if f.Permissions != "" {
		mode, asMeant := yamlMode(f.Permissions)
		switch {
		case mode < 0:
			// YAML reads a string where the transpiler wants a number, and
			// CABPK fails on it.
			b.ps.Errorf(pp("permissions"), "is not a number, which the legacy %s layout cannot carry (CABPK's Ignition transpiler refuses it too)", Format)
		case !asMeant:
			b.ps.Warnf(pp("permissions"), "has no leading 0, so the legacy layout reads it as a decimal number and the file gets mode %#o (write it with a leading 0)", mode)
		}
		out.Mode = &mode
	}
	content, reindented, ok := literalBlock(f.Content)
	switch {
	case !ok:
		b.ps.Errorf(pp("content"), "cannot be carried by the legacy %s layout (YAML rejects its characters or indentation); use base64 encoding", Format)
	case reindented && f.Encoding == provisioning.EncodingNone:
		b.ps.Warnf(pp("content"), "starts with an indented line, so the legacy layout removes that indentation from every line")
	}
	if f.Encoding == provisioning.EncodingBase64 && ok {
		raw, err := base64.StdEncoding.DecodeString(content)
		if err != nil {
			b.ps.Errorf(pp("content"), "is not valid base64: %v", err)
		}
		content = string(raw)
	}
	out.Contents.Inline = content
	b.cfg.Storage.Files = append(b.cfg.Storage.Files, out)
}

// generatedFile is a file the layout adds; its content is still read as a
// literal block, because user values (sudo rules, NTP servers) are in it.
func (b *legacyBuilder) generatedFile(pp, filePath string, mode int, content string) ctypes.File {
	read, _, ok := literalBlock(content)
	if !ok {
		b.ps.Errorf(pp, "cannot be carried by the legacy %s layout (YAML rejects its characters or line layout)", Format)
	}
	return ctypes.File{Path: b.plain(pp, filePath), Mode: &mode, Contents: ctypes.FileContents{Inline: read}}
}

// plain reads v as CABPK's YAML does and reports when that changes it.
func (b *legacyBuilder) plain(pp, v string) string { return b.plainValue(pp, v, strconv.Quote(v)) }

// plainValue is plain with the value shown as shown: "the value" for a
// secret, whose text must never reach a condition or a log.
func (b *legacyBuilder) plainValue(pp, v, shown string) string {
	got, _, ok := plainScalar(v)
	switch {
	case !ok:
		b.ps.Errorf(pp, "%s cannot be written as a plain YAML value, so the legacy %s layout cannot carry it", shown, Format)
		return v
	case got != v:
		if shown == strconv.Quote(v) {
			b.ps.Warnf(pp, "%s is read as %q by the legacy layout (a plain YAML value)", shown, got)
		} else {
			b.ps.Warnf(pp, "%s is changed when read by the legacy layout (a plain YAML value)", shown)
		}
	}
	return got
}

func (b *legacyBuilder) plainPtr(pp, v string) *string {
	return b.plainValuePtr(pp, v, strconv.Quote(v))
}

// secretPtr is plainPtr for a password hash: problems never quote it.
func (b *legacyBuilder) secretPtr(pp, v string) *string { return b.plainValuePtr(pp, v, "the value") }

func (b *legacyBuilder) plainValuePtr(pp, v, shown string) *string {
	if v == "" {
		return nil
	}
	if _, null, ok := plainScalar(v); ok && null {
		b.ps.Warnf(pp, "%s is read as null by the legacy layout (a plain YAML value) and dropped", shown)
		return nil
	}
	s := b.plainValue(pp, v, shown)
	return &s
}

func ptrTo[T any](v T) *T { return &v }
