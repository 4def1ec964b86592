package cloudinit

import (
	"encoding/base64"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nodeboot/nodeboot/provisioning"
)

// plainDoc is the plain dialect's cloud-config: cloud-init's module keys as
// Go fields, marshalled once by a YAML library, so every value is data
// whatever it contains. cloud-init runs the modules in its own order
// (bootcmd, write_files, users, disk_setup, mounts, ntp, then the
// deferred files and runcmd in its final stage), not in key order.
type plainDoc struct {
	BootCmd    plainLines              `yaml:"bootcmd,omitempty"`
	WriteFiles []plainFile             `yaml:"write_files,omitempty"`
	Users      []plainUser             `yaml:"users,omitempty"`
	DiskSetup  map[plainText]plainDisk `yaml:"disk_setup,omitempty"`
	FSSetup    []plainFS               `yaml:"fs_setup,omitempty"`
	Mounts     []plainLines            `yaml:"mounts,omitempty"`
	NTP        *plainNTP               `yaml:"ntp,omitempty"`
	RunCmd     plainLines              `yaml:"runcmd,omitempty"`
}

type plainFile struct {
	Path        plainText `yaml:"path"`
	Encoding    plainText `yaml:"encoding,omitempty"`
	Owner       plainText `yaml:"owner,omitempty"`
	Permissions plainText `yaml:"permissions,omitempty"`
	Append      bool      `yaml:"append,omitempty"`
	Defer       bool      `yaml:"defer,omitempty"`
	Content     plainText `yaml:"content"`
}

type plainUser struct {
	Name              plainText  `yaml:"name"`
	Gecos             plainText  `yaml:"gecos,omitempty"`
	Groups            plainLines `yaml:"groups,omitempty"`
	HomeDir           plainText  `yaml:"homedir,omitempty"`
	Shell             plainText  `yaml:"shell,omitempty"`
	PrimaryGroup      plainText  `yaml:"primary_group,omitempty"`
	Passwd            plainText  `yaml:"passwd,omitempty"`
	LockPasswd        *bool      `yaml:"lock_passwd,omitempty"`
	ExpireDate        plainText  `yaml:"expiredate,omitempty"`
	Sudo              plainText  `yaml:"sudo,omitempty"`
	SSHAuthorizedKeys plainLines `yaml:"ssh_authorized_keys,omitempty"`
}

type plainNTP struct {
	Enabled *bool      `yaml:"enabled,omitempty"`
	Servers plainLines `yaml:"servers,omitempty"`
}

type plainDisk struct {
	TableType plainText `yaml:"table_type,omitempty"`
	// Layout is a bool, or a list of percentages and [percentage, type].
	Layout    any   `yaml:"layout"`
	Overwrite *bool `yaml:"overwrite,omitempty"`
}

type plainFS struct {
	Label      plainText  `yaml:"label,omitempty"`
	Filesystem plainText  `yaml:"filesystem,omitempty"`
	Device     plainText  `yaml:"device,omitempty"`
	Partition  any        `yaml:"partition,omitempty"`
	Overwrite  *bool      `yaml:"overwrite,omitempty"`
	ReplaceFS  plainText  `yaml:"replace_fs,omitempty"`
	ExtraOpts  plainLines `yaml:"extra_opts,omitempty"`
}

// plainDocument builds the document of a Plan whose units are already
// desugared (withUnits) and which passed checkPlain.
func plainDocument(p *provisioning.Plan) *plainDoc {
	d := &plainDoc{}
	if len(p.BootCommands) > 0 {
		// As runcmd: each in its own shell, the first failure stops the rest.
		d.BootCmd = append(make([]string, 0, len(p.BootCommands)+1), "set -e")
		for _, c := range p.BootCommands {
			d.BootCmd = append(d.BootCmd, provisioning.OwnShell(c))
		}
	}
	created := map[string]bool{}
	for i := range p.Users {
		u := &p.Users[i]
		created[u.Name] = true
		if u.PrimaryGroup != "" {
			created[u.PrimaryGroup] = true
		}
		for _, g := range splitGroups(u.Groups) {
			created[g] = true
		}
		d.Users = append(d.Users, plainUserOf(u))
	}
	for i := range p.Files {
		d.WriteFiles = append(d.WriteFiles, plainFileOf(&p.Files[i], created))
	}
	if n := p.NTP; n != nil {
		d.NTP = &plainNTP{Enabled: n.Enabled, Servers: n.Servers}
	}
	if ds := p.Disks; ds != nil {
		for _, part := range ds.Partitions {
			if d.DiskSetup == nil {
				d.DiskSetup = map[plainText]plainDisk{}
			}
			d.DiskSetup[plainText(part.Device)] = plainDiskOf(&part)
		}
		for _, fs := range ds.Filesystems {
			d.FSSetup = append(d.FSSetup, plainFSOf(&fs))
		}
	}
	for _, m := range p.Mounts {
		d.Mounts = append(d.Mounts, plainLines(m))
	}
	d.RunCmd = plainRunCmd(p)
	return d
}

// plainFileOf writes content that is not UTF-8 text, or raw gzip, as
// base64, which is what YAML can carry without a binary tag. A file owned
// by an account or group the Plan creates is deferred to cloud-init's
// final stage: write_files runs before users-groups, and chown to an
// account that does not exist yet fails. Deferred files are still written
// before runcmd.
func plainFileOf(f *provisioning.File, created map[string]bool) plainFile {
	out := plainFile{Path: plainText(f.Path), Owner: plainText(f.Owner), Permissions: plainText(f.Permissions), Content: plainText(f.Content)}
	switch f.Encoding {
	case provisioning.EncodingNone:
		if !utf8.ValidString(f.Content) {
			out.Encoding, out.Content = "b64", plainText(base64.StdEncoding.EncodeToString([]byte(f.Content)))
		}
	case provisioning.EncodingBase64:
		out.Encoding = "b64"
	case provisioning.EncodingGzip:
		out.Encoding, out.Content = "gz+b64", plainText(base64.StdEncoding.EncodeToString([]byte(f.Content)))
	case provisioning.EncodingGzipBase64:
		out.Encoding = "gz+b64"
	}
	out.Append = f.Append != nil && *f.Append
	if user, group, _ := strings.Cut(f.Owner, ":"); created[user] || created[group] {
		out.Defer = true
	}
	return out
}

func plainUserOf(u *provisioning.User) plainUser {
	out := plainUser{
		Name: plainText(u.Name), Gecos: plainText(u.Gecos), Groups: splitGroups(u.Groups), HomeDir: plainText(u.HomeDir), Shell: plainText(u.Shell),
		PrimaryGroup: plainText(u.PrimaryGroup), Passwd: plainText(u.Passwd), LockPasswd: u.LockPassword, Sudo: plainText(u.Sudo),
		SSHAuthorizedKeys: u.SSHAuthorizedKeys,
	}
	if u.Inactive != nil && *u.Inactive {
		// cloud-init's inactive counts days after a password expires; an
		// account that expired in 1970 is what inactive: true means.
		out.ExpireDate = inactiveExpireDate
	}
	return out
}

// splitGroups reads the Plan's comma-separated group list.
func splitGroups(groups string) []string {
	var out []string
	for _, g := range strings.Split(groups, ",") {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return out
}

func plainDiskOf(p *provisioning.Partition) plainDisk {
	out := plainDisk{TableType: plainText(p.TableType), Overwrite: p.Overwrite, Layout: false}
	switch {
	case len(p.DiskLayout) > 0:
		layout := make([]any, len(p.DiskLayout))
		for i, s := range p.DiskLayout {
			layout[i] = int(s.Percentage)
			if s.PartitionType != "" {
				layout[i] = []any{int(s.Percentage), plainNumber(partitionTypeCode(s.PartitionType))}
			}
		}
		out.Layout = layout
	case p.Layout != nil:
		out.Layout = *p.Layout
	}
	return out
}

func plainFSOf(fs *provisioning.Filesystem) plainFS {
	out := plainFS{
		Label: plainText(fs.Label), Filesystem: plainText(fs.Filesystem), Device: plainText(fs.Device), Overwrite: fs.Overwrite,
		ReplaceFS: plainText(fs.ReplaceFS), ExtraOpts: fs.ExtraOpts,
	}
	if fs.Partition != "" {
		out.Partition = plainNumber(fs.Partition)
	}
	return out
}

// plainNumber is a decimal number as an integer, what cloud-init means by
// a partition number or type, and anything else as the string it is.
func plainNumber(s string) any {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 && s[0] != '+' {
		return n
	}
	return plainText(s)
}

// plainRunCmd is runcmd as one script with set -e semantics: the unit
// steps and pre commands, the bootstrap command, the sentinel, then the
// post commands, so a failing command stops everything after it, as in
// Ignition v3's first-boot script and the Plan's phase order. Each command
// runs in its own "/bin/sh -e -c", as the Plan's Command says: its exit 0,
// cd or variables end with it, and its exit code is runcmd's.
func plainRunCmd(p *provisioning.Plan) []string {
	var modes []string
	for i := range p.Files {
		if f := &p.Files[i]; f.SpecialBits() {
			// write_files sets the mode before the owner, and chown clears
			// setuid and setgid: the mode again, before any command.
			modes = append(modes, "chmod "+f.Permissions+" "+shellQuote(f.Path))
		}
	}
	if len(p.Commands) == 0 && p.Sentinel == "" && len(modes) == 0 {
		return nil
	}
	out := append([]string{"set -e"}, modes...)
	for _, phase := range []provisioning.Phase{provisioning.PhasePre, provisioning.PhaseBootstrap} {
		for _, c := range p.CommandsIn(phase) {
			out = append(out, provisioning.OwnShell(c.Script))
		}
	}
	if p.Sentinel != "" {
		out = append(out, "mkdir -p "+shellQuote(path.Dir(p.Sentinel))+" && echo success > "+shellQuote(p.Sentinel))
	}
	for _, c := range p.CommandsIn(provisioning.PhasePost) {
		out = append(out, provisioning.OwnShell(c.Script))
	}
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
