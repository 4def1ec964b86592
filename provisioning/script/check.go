package script

import (
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"
)

// maxArg is the longest command this provisioner renders. A command is one
// argument of "sh -c", and Linux refuses a single argument longer than
// 128 KiB (MAX_ARG_STRLEN) at exec time, which would fail the node late.
const maxArg = 128<<10 - 1

// check is what Check and Render share. Validate already refuses a nil
// Plan, bad unit names and a sentinel without a bootstrap command; this
// adds what a shell script cannot carry or the image's tools would read
// differently. Hazards stay errors: there is no CABPK dialect to match.
func check(p *provisioning.Plan, opts provisioning.Options) provisioning.Problems {
	ps := p.Validate()
	if p == nil {
		return ps
	}
	if opts.Version != "" {
		ps.Errorf(opts.VersionPath(), "the %s provisioner has one dialect; version %q is not supported", Format, opts.Version)
	}
	if opts.Compress {
		provisioning.Unsupported(&ps, Format, provisioning.NewPath("options", "compress"), "compressed output (a script must stay runnable as it is)")
	}
	if len(opts.AdditionalConfig) > 0 {
		provisioning.Unsupported(&ps, Format, opts.AdditionalConfigPath(), "additional config")
	}
	// A shell has no instance metadata of its own: which metadata service
	// a node has, and how it authenticates, is the cloud's.
	provisioning.RefuseNodeValues(&ps, p, Format)
	provisioning.RefuseLiteralJinja(&ps, p, Format)
	provisioning.RefuseUserData(&ps, p, Format, provisioning.UserDataShellScript)
	if p.NTP != nil {
		provisioning.Unsupported(&ps, Format, p.SectionPath(provisioning.SectionNTP), "NTP configuration (images differ in their time daemon)")
	}
	if d := p.Disks; d != nil {
		if len(d.Partitions) > 0 {
			provisioning.Unsupported(&ps, Format, p.SectionPath(provisioning.SectionPartitions), "disk partitioning")
		}
		if len(d.Filesystems) > 0 {
			provisioning.Unsupported(&ps, Format, p.SectionPath(provisioning.SectionFilesystems), "filesystem creation")
		}
	}
	if len(p.Mounts) > 0 {
		provisioning.Unsupported(&ps, Format, p.SectionPath(provisioning.SectionMounts), "mounts")
	}
	for i := range p.Files {
		if f := &p.Files[i]; provisioning.IsWindowsPath(f.Path) {
			provisioning.Unsupported(&ps, Format, p.FilePath(i).Member("path"), "a Windows path")
		}
	}
	for i := range p.Users {
		checkUser(&ps, &p.Users[i], p.UserPath(i))
	}
	for i, c := range p.BootCommands {
		checkCommand(&ps, p.SectionPath(provisioning.SectionBootCommands).Index(i), c)
	}
	for i := range p.Commands {
		checkCommand(&ps, p.CommandPath(i).Member("script"), p.Commands[i].Script)
	}
	return ps.Strict(opts)
}

func checkCommand(ps *provisioning.Problems, at provisioning.Path, script string) {
	switch {
	case strings.Contains(script, "\x00"):
		ps.Errorf(at, "must not contain NUL")
	case len(script) > maxArg:
		ps.Errorf(at, "is %d bytes; the %s provisioner runs a command as one sh -c argument, at most %d bytes: write a longer script as a file and run the file", len(script), Format, maxArg)
	}
}

// checkUser refuses what useradd, chpasswd, sudo or sshd would read
// differently than meant: the account databases are ':'-separated and
// sudoers and authorized_keys line-separated. Validate reports line
// breaks in the passwd-database fields already.
func checkUser(ps *provisioning.Problems, u *provisioning.User, at provisioning.Path) {
	for _, f := range [...]struct{ name, v, bad, what string }{
		{"name", u.Name, "\x00", "NUL"},
		{"gecos", u.Gecos, ":\x00", "':' or NUL"},
		{"homeDir", u.HomeDir, ":\x00", "':' or NUL"},
		{"shell", u.Shell, ":\x00", "':' or NUL"},
		{"groups", u.Groups, ":\x00", "':' or NUL"},
		{"primaryGroup", u.PrimaryGroup, ":, \t\x00", "':', ',', blanks or NUL"},
		{"passwd", u.Passwd, ":\n\r\x00", "':', line breaks or NUL"},
		{"sudo", u.Sudo, "\n\r\x00", "line breaks or NUL: it is one sudoers rule"},
	} {
		if strings.ContainsAny(f.v, f.bad) {
			ps.Errorf(at.Member(f.name), "must not contain %s", f.what)
		}
	}
	for _, g := range splitGroups(u.Groups) {
		if strings.ContainsAny(g, " \t") {
			ps.Errorf(at.Member("groups"), "must be group names separated by commas, each without blanks")
			break
		}
	}
	for j, k := range u.SSHAuthorizedKeys {
		if strings.ContainsAny(k, "\n\r\x00") {
			ps.Errorf(at.Member("sshAuthorizedKeys").Index(j), "must be one line without NUL")
		}
	}
}
