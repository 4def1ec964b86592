package provisioning

import "strings"

// Role says which part a node plays in forming its cluster. Renderers use it
// only where the target format has a documented difference between roles.
type Role string

const (
	// RoleInit is the first control-plane node: it creates the cluster.
	RoleInit Role = "init"
	// RoleJoinControlPlane is a further control-plane node joining an existing cluster.
	RoleJoinControlPlane Role = "join-control-plane"
	// RoleJoinWorker is a worker node joining an existing cluster.
	RoleJoinWorker Role = "join-worker"
)

// Plan is everything a node must do at first boot, in order, without saying how
// a particular provisioning system expresses it.
//
// Each element means one thing, stated here once, and every native provisioner
// (cloud-config "plain", Ignition v3, the script) implements that meaning or
// refuses the element with ErrUnsupported naming its field; Capabilities says
// which. Package provisioning/conformance holds the meaning as data, Plans and
// the node each must give, and nodeboot's test suite runs it through the real
// cloud-init, Ignition and a shell. CABPK's dialects (VersionCABPK) keep
// CABPK's bytes; where those mean something else, the difference is a row of
// the table in the README's library section.
//
// The first boot does, in this order: BootCommands; Files; Users and their
// groups (files owned by them get their owner once they exist); Units written,
// then enabled or disabled; the pre Commands; the enabled Units (re)started;
// the bootstrap Command; the Sentinel; the post Commands.
//
// Commands. Each Command, and each boot command, runs in its own
// "/bin/sh -e -c SCRIPT" (OwnShell), as root, in /: POSIX sh with errexit,
// whatever /bin/sh is on the image (dash on Debian and Ubuntu, bash on
// Flatcar and Fedora CoreOS), so a script should be POSIX sh. Nothing carries
// from one command to the next: not a variable, a cd, a set option or a
// function; phases share no shell either. A command fails when its shell
// exits non-zero, so under -e at the first simple command that fails outside
// a condition. A failing command stops the boot: no later command of any
// phase runs, no enabled unit is started after it, and the Sentinel is not
// written; files, users and units already in place stay. The boot's commands
// end with the failing command's exit status (cloud-init's runcmd script,
// Ignition's first-boot unit, the script's own exit code), which is what the
// image's status (cloud-init status, systemctl, a bootstrap reporter) shows;
// the script also names the command on stderr. "exit 0" ends its own
// command, successfully, and the next command runs: to stop the boot on
// purpose, exit non-zero. Commands run once per instance; BootCommands run
// before anything else (cloud-init and Ignition: on every boot; the script:
// once, when it runs).
//
// Units. A Unit's file and drop-ins are in place before any command runs.
// Enabled true enables the unit for every later boot and (re)starts it after
// the pre commands, before the bootstrap command, so a unit whose binary a
// pre command installs starts once the binary exists. Where systemd starts
// the unit itself earlier in the boot (Ignition writes units before systemd
// starts), that early start may fail; the start after the pre commands is
// the one that counts, and its failure fails the boot like a command's.
// Where systemd does not run (the script in a chroot) the unit is enabled
// only. Enabled false disables and stops the unit before any command; nil
// leaves it as the image has it, with its drop-ins applied (a running unit
// restarts to pick them up).
//
// NTP. A nil NTP leaves time synchronisation as the image has it. A non-nil
// NTP with Enabled nil or true turns it on: with Servers empty, with the
// image's or the client's default servers; otherwise with exactly Servers.
// Enabled false is cloud-init's meaning: the Plan configures nothing (the
// image's default stays), and Servers are ignored.
//
// File modes and owners. Permissions is three or four octal digits, with or
// without a leading zero ("640", "0640", "4755"); empty is 0644. Owner is
// "user" or "user:group" by name; "user" alone leaves the group root. The
// file is written with its mode before any content, and gets its owner once
// the Plan's users exist, so it may be owned by one of them.
//
// Per-node values. A File.Template or Command.Template is text with
// NodeValues (the node's name, local IPv4, instance ID) that the node fills
// in from its instance metadata at first boot; every literal part is data,
// never a template, in every format. A templated file is in place, with its
// mode and owner, before the pre commands run (Ignition: the first-boot
// script writes it, so not before BootCommands nor before systemd's own
// early start of an enabled unit; the start after the pre commands sees
// it). In a command a value reads as ShellValue, a double-quoted expansion
// of the value's Env variable, which every pre, bootstrap and post
// command gets (boot commands do not). A
// value the metadata lacks stops the boot before any command runs, naming
// the value. cloud-init reads v1.local_hostname, ds.meta_data.local_ipv4
// and v1.instance_id; Ignition reads Flatcar's (coreos-metadata,
// /run/metadata/flatcar) or Fedora CoreOS's (afterburn) metadata
// environment; the script and CABPK's dialects refuse templates. A
// Content or Script that asks for a value in CABPK's way, with jinja over
// cloud-init's instance data ("{{ ds.meta_data.local_hostname }}"), would
// reach the node as that text: the native provisioners refuse it at the
// field (Ignition v3, which also renders KubeadmConfigs, warns).
//
// User data. UserData documents are carried beside the Plan's output for
// the node's system to apply: see UserData for what each type does.
type Plan struct {
	// Role is the node's part in forming the cluster.
	Role Role
	// Files are written before any command runs, in this order.
	Files []File
	// Users are created before the commands run.
	Users []User
	// Units are systemd units installed after Files are written and before
	// any command runs.
	Units []Unit
	// NTP configures time synchronisation; nil leaves the image's default.
	NTP *NTP
	// Disks partitions devices and creates filesystems; nil touches no disk.
	Disks *DiskSetup
	// Mounts are fstab-style entries: spec, mount point, then optional type,
	// options, dump and pass.
	Mounts []Mount
	// BootCommands run very early on every boot, before files are written.
	BootCommands []string
	// Commands run once, in order, each in its own shell; see Phase and
	// the Plan's godoc for what a failing command stops.
	Commands []Command
	// Sentinel is the absolute path of a file holding "success\n", written
	// (mode 0644, directories made) right after the bootstrap command
	// succeeded and before the post commands. Empty means no sentinel.
	Sentinel string
	// UserData is free-form user data of the node's provisioning system,
	// carried beside the Plan's output (see UserData).
	UserData []UserData
	// Origins names the input fields of the sections whose elements carry no
	// Origin of their own, so problems about them name what the user wrote.
	Origins Origins
}

// Origins are the input field paths of a Plan's sections; a zero Path
// leaves the Plan's own path (see Plan.SectionPath).
type Origins struct {
	NTP          Path
	Partitions   Path
	Filesystems  Path
	Mounts       Path
	BootCommands Path
	Sentinel     Path
}

// Section is a part of a Plan whose elements carry no Origin of their own.
type Section int

const (
	// SectionNTP is Plan.NTP, "ntp".
	SectionNTP Section = iota
	// SectionPartitions is Plan.Disks.Partitions, "disks.partitions".
	SectionPartitions
	// SectionFilesystems is Plan.Disks.Filesystems, "disks.filesystems".
	SectionFilesystems
	// SectionMounts is Plan.Mounts, "mounts".
	SectionMounts
	// SectionBootCommands is Plan.BootCommands, "bootCommands".
	SectionBootCommands
	// SectionSentinel is Plan.Sentinel, "sentinel".
	SectionSentinel
)

// SectionPath is the path problems about section s are reported at: its
// Origins entry when set, else the Plan's own path of the section. It is
// safe on a nil Plan.
func (p *Plan) SectionPath(s Section) Path {
	o := &Origins{}
	if p != nil {
		o = &p.Origins
	}
	pick := func(origin Path, plan ...string) Path {
		if !origin.IsZero() {
			return origin
		}
		return NewPath(plan[0], plan[1:]...)
	}
	switch s {
	case SectionNTP:
		return pick(o.NTP, "ntp")
	case SectionPartitions:
		return pick(o.Partitions, "disks", "partitions")
	case SectionFilesystems:
		return pick(o.Filesystems, "disks", "filesystems")
	case SectionMounts:
		return pick(o.Mounts, "mounts")
	case SectionBootCommands:
		return pick(o.BootCommands, "bootCommands")
	}
	return pick(o.Sentinel, "sentinel")
}

// FilePath is the path of Files[i] for problems: its Origin, or files[i].
func (p *Plan) FilePath(i int) Path {
	return elementPath(p.Files[i].Origin, "files", i)
}

// UserPath is the path of Users[i] for problems: its Origin, or users[i].
func (p *Plan) UserPath(i int) Path {
	return elementPath(p.Users[i].Origin, "users", i)
}

// CommandPath is the path of Commands[i] for problems: its Origin, or
// commands[i].
func (p *Plan) CommandPath(i int) Path {
	return elementPath(p.Commands[i].Origin, "commands", i)
}

func elementPath(origin Path, list string, i int) Path {
	if !origin.IsZero() {
		return origin
	}
	return NewPath(list).Index(i).WithFields()
}

// File is a file to write on the node.
type File struct {
	// Path is absolute.
	Path string
	// Owner is "user" or "user:group"; empty leaves the provisioner's default.
	Owner string
	// Permissions is an octal mode such as "0640"; empty leaves the default.
	Permissions string
	// Encoding says how Content is encoded.
	Encoding Encoding
	// Append adds Content to an existing file instead of replacing it.
	Append *bool
	// Content is the file's content, encoded as Encoding says.
	Content string
	// Template, when set, is the file's content with per-node values
	// (see Plan); Content must then be empty and Encoding EncodingNone.
	Template Text
	// Origin is the field path of the input this file came from (for example
	// spec.files[2]), used to name the culprit in problems. Zero for
	// generated files.
	Origin Path
	// BootstrapInput marks the configuration the bootstrap command reads.
	// Renderers that guard the bootstrap step with a run-once mechanism (such
	// as an Ignition oneshot unit conditioned on this file) use it; others
	// write it like any file.
	BootstrapInput bool
}

// SpecialBits reports whether the file's Permissions ask for setuid, setgid
// or the sticky bit: four octal digits, the first not 0
// (ElementFileSpecialBits).
func (f *File) SpecialBits() bool {
	return len(f.Permissions) == 4 && f.Permissions[0] >= '1' && f.Permissions[0] <= '7'
}

// Encoding of a File's Content.
type Encoding string

const (
	// EncodingNone is plain text.
	EncodingNone Encoding = ""
	// EncodingBase64 is standard base64.
	EncodingBase64 Encoding = "base64"
	// EncodingGzip is raw gzip bytes.
	EncodingGzip Encoding = "gzip"
	// EncodingGzipBase64 is gzip, then base64.
	EncodingGzipBase64 Encoding = "gzip+base64"
)

// Encodings lists every Encoding a Plan may use.
var Encodings = []Encoding{EncodingNone, EncodingBase64, EncodingGzip, EncodingGzipBase64}

// User is a local account to create.
type User struct {
	Name              string
	Gecos             string
	Groups            string
	HomeDir           string
	Inactive          *bool
	Shell             string
	Passwd            string
	PrimaryGroup      string
	LockPassword      *bool
	Sudo              string
	SSHAuthorizedKeys []string
	// Origin is the input field path, as for File.
	Origin Path
}

// NTP configures time synchronisation: Enabled nil or true turns it on,
// with Servers or, when empty, the default servers; false configures
// nothing (see Plan).
type NTP struct {
	Enabled *bool
	Servers []string
}

// DiskSetup partitions devices and creates filesystems on them.
type DiskSetup struct {
	Partitions  []Partition
	Filesystems []Filesystem
}

// Partition describes the partition table of one device.
type Partition struct {
	Device string
	// Layout true makes one partition over the whole device.
	Layout    *bool
	Overwrite *bool
	// TableType is "mbr" or "gpt".
	TableType string
	// DiskLayout, when set, replaces Layout with explicit partitions.
	DiskLayout []PartitionSpec
}

// PartitionSpec is one partition of a DiskLayout.
type PartitionSpec struct {
	// Percentage of the device this partition takes.
	Percentage int32
	// PartitionType is a name such as "Linux" or "LVM", or a raw type code.
	PartitionType string
}

// Filesystem is a filesystem to create.
type Filesystem struct {
	Device     string
	Filesystem string
	Label      string
	Partition  string
	Overwrite  *bool
	ReplaceFS  string
	ExtraOpts  []string
}

// Mount is an fstab-style entry.
type Mount []string

// Phase orders Commands relative to the bootstrap step.
type Phase int

const (
	// PhasePre runs before the bootstrap step.
	PhasePre Phase = iota
	// PhaseBootstrap is the step that makes the node part of the cluster. A
	// Plan has at most one; its success writes the Sentinel.
	PhaseBootstrap
	// PhasePost runs after the bootstrap step succeeded.
	PhasePost
)

func (p Phase) String() string {
	switch p {
	case PhasePre:
		return "pre"
	case PhaseBootstrap:
		return "bootstrap"
	case PhasePost:
		return "post"
	}
	return "unknown"
}

// Command is a shell script run once at first boot, in its own
// "/bin/sh -e -c" (see Plan for what its exit status does).
type Command struct {
	Phase  Phase
	Script string
	// Template, when set, is the script with per-node values (see Plan);
	// Script must then be empty.
	Template Text
	// Origin is the input field path, as for File.
	Origin Path
}

// CommandsIn returns the scripts of the commands in phase p, in order.
func (p *Plan) CommandsIn(phase Phase) []Command {
	var out []Command
	for _, c := range p.Commands {
		if c.Phase == phase {
			out = append(out, c)
		}
	}
	return out
}

// OwnShell is the shell line that runs script as the Plan's Command says a
// command runs: in its own "/bin/sh -e -c", so an exit, a cd or a variable
// ends with it, and its exit status is the line's. Provisioners that
// gather commands into one script (cloud-init's runcmd, Ignition's
// first-boot script) put one such line per command.
func OwnShell(script string) string {
	return "/bin/sh -e -c '" + strings.ReplaceAll(script, "'", `'\''`) + "'"
}
