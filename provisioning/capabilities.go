package provisioning

import (
	"errors"
	"fmt"
)

// Element is one thing a Plan can ask of a node, as Capabilities and the
// conformance suite (provisioning/conformance) name it.
type Element string

// The elements of a Plan. Each is the Plan field (or the field of an
// element) a provisioner that cannot express it names in its ErrUnsupported
// problem.
const (
	ElementFiles      Element = "files"
	ElementFileOwner  Element = "files.owner"
	ElementFileAppend Element = "files.append"
	ElementFileGzip   Element = "files.encoding=gzip"
	// ElementFileSpecialBits is a file mode with setuid, setgid or the
	// sticky bit (File.SpecialBits).
	ElementFileSpecialBits Element = "files.permissions=special"
	ElementUsers           Element = "users"
	ElementUserSudo        Element = "users.sudo"
	ElementUserSSHKeys     Element = "users.sshAuthorizedKeys"
	ElementUserPasswd      Element = "users.passwd"
	ElementUnits           Element = "units"
	ElementUnitDropIns     Element = "units.dropIns"
	ElementNTP             Element = "ntp"
	ElementDisks           Element = "disks"
	ElementMounts          Element = "mounts"
	ElementBootCommands    Element = "bootCommands"
	ElementCommands        Element = "commands"
	ElementSentinel        Element = "sentinel"
	// ElementFileTemplate is a file with per-node values (File.Template).
	ElementFileTemplate Element = "files.template"
	// ElementCommandTemplate is a command with per-node values
	// (Command.Template).
	ElementCommandTemplate Element = "commands.template"
	// ElementUserDataCloudConfig, ElementUserDataShellScript and
	// ElementUserDataIgnition are UserData of each type; a provisioner that
	// cannot carry one names userData[i].type.
	ElementUserDataCloudConfig Element = "userData.type=cloud-config"
	ElementUserDataShellScript Element = "userData.type=shell-script"
	ElementUserDataIgnition    Element = "userData.type=ignition"
)

// Elements lists every Element, in the order of the Plan's fields.
var Elements = []Element{
	ElementFiles, ElementFileOwner, ElementFileAppend, ElementFileGzip, ElementFileSpecialBits,
	ElementUsers, ElementUserSudo, ElementUserSSHKeys, ElementUserPasswd,
	ElementUnits, ElementUnitDropIns, ElementNTP, ElementDisks, ElementMounts,
	ElementBootCommands, ElementCommands, ElementSentinel,
	ElementFileTemplate, ElementCommandTemplate,
	ElementUserDataCloudConfig, ElementUserDataShellScript, ElementUserDataIgnition,
}

// Support says which Elements a format (in one version) expresses.
type Support map[Element]bool

// Supports reports whether e is expressed. An Element a Support does not
// list is not.
func (s Support) Supports(e Element) bool { return s[e] }

// Capabilities reports which Elements the provisioner registered for format
// expresses in version (Options.Version). An element is supported when
// Check raises no ErrUnsupported problem for a small Plan that uses it,
// so the answer is the provisioner's own and holds for third-party
// provisioners too; the conformance suite checks it against what the
// real tools do with each element. An unknown format is ErrUnknownFormat;
// a version the provisioner refuses is its ErrUnsupported or ErrInvalid
// problem.
func Capabilities(format, version string) (Support, error) {
	p, err := Get(format)
	if err != nil {
		return nil, err
	}
	opts := Options{Version: version}
	base := probePlan()
	if err := p.Check(base, opts).Errors().Err(); err != nil {
		return nil, fmt.Errorf("%s version %q: %w", format, version, err)
	}
	out := Support{}
	for _, e := range Elements {
		plan := probePlan()
		probes[e](plan)
		out[e] = !unsupported(p.Check(plan, opts))
	}
	return out, nil
}

func unsupported(ps Problems) bool {
	for _, p := range ps {
		if p.Severity == SeverityError && errors.Is(p.Err, ErrUnsupported) {
			return true
		}
	}
	return false
}

// probePlan is the smallest Plan every provisioner renders: one bootstrap
// command.
func probePlan() *Plan {
	return &Plan{
		Role:     RoleJoinWorker,
		Commands: []Command{{Phase: PhaseBootstrap, Script: "true"}},
	}
}

var yes = func() *bool { b := true; return &b }()

// probes add one Element to a probe Plan each.
var probes = map[Element]func(*Plan){
	ElementFiles: func(p *Plan) { p.Files = []File{{Path: "/etc/probe", Content: "x\n", Permissions: "0644"}} },
	ElementFileOwner: func(p *Plan) {
		p.Files = []File{{Path: "/etc/probe", Content: "x\n", Permissions: "0644", Owner: "root:root"}}
	},
	ElementFileAppend: func(p *Plan) {
		p.Files = []File{{Path: "/etc/probe", Content: "x\n", Permissions: "0644", Append: yes}}
	},
	ElementFileGzip: func(p *Plan) {
		// "x\n", gzipped and base64-encoded.
		p.Files = []File{{Path: "/etc/probe", Permissions: "0644", Encoding: EncodingGzipBase64, Content: "H4sIAAAAAAAAA6vgAgAfCOpGAgAAAA=="}}
	},
	ElementFileSpecialBits: func(p *Plan) {
		p.Files = []File{{Path: "/usr/local/bin/probe", Content: "#!/bin/sh\n", Permissions: "4755"}}
	},
	ElementUsers:    func(p *Plan) { p.Users = []User{{Name: "probe"}} },
	ElementUserSudo: func(p *Plan) { p.Users = []User{{Name: "probe", Sudo: "ALL=(ALL) NOPASSWD:ALL"}} },
	ElementUserSSHKeys: func(p *Plan) {
		p.Users = []User{{Name: "probe", SSHAuthorizedKeys: []string{"ssh-ed25519 AAAA probe"}}}
	},
	ElementUserPasswd: func(p *Plan) { p.Users = []User{{Name: "probe", Passwd: "$6$probe$probe"}} },
	ElementUnits: func(p *Plan) {
		p.Units = []Unit{{Name: "probe.service", Enabled: yes, Contents: "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"}}
	},
	ElementUnitDropIns: func(p *Plan) {
		p.Units = []Unit{{Name: "probe.service", DropIns: []DropIn{{Name: "10-probe.conf", Contents: "[Service]\nEnvironment=A=1\n"}}}}
	},
	ElementNTP: func(p *Plan) { p.NTP = &NTP{Enabled: yes, Servers: []string{"ntp.example.org"}} },
	ElementDisks: func(p *Plan) {
		p.Disks = &DiskSetup{Filesystems: []Filesystem{{Device: "/dev/vdb", Filesystem: "ext4", Label: "probe"}}}
	},
	ElementMounts:       func(p *Plan) { p.Mounts = []Mount{{"LABEL=probe", "/mnt/probe"}} },
	ElementBootCommands: func(p *Plan) { p.BootCommands = []string{"true"} },
	ElementCommands: func(p *Plan) {
		p.Commands = append([]Command{{Phase: PhasePre, Script: "true"}}, append(p.Commands, Command{Phase: PhasePost, Script: "true"})...)
	},
	ElementSentinel: func(p *Plan) { p.Sentinel = "/run/probe/success" },
	ElementFileTemplate: func(p *Plan) {
		p.Files = []File{{Path: "/etc/probe", Permissions: "0644", Template: Text{Literal("name: "), Value(NodeName), Literal("\n")}}}
	},
	ElementCommandTemplate: func(p *Plan) {
		p.Commands = append([]Command{{Phase: PhasePre, Template: Text{Literal("echo "), Value(NodeInstanceID)}}}, p.Commands...)
	},
	ElementUserDataCloudConfig: func(p *Plan) {
		p.UserData = []UserData{{Type: UserDataCloudConfig, Content: "#cloud-config\nruncmd:\n- [true]\n"}}
	},
	ElementUserDataShellScript: func(p *Plan) {
		p.UserData = []UserData{{Type: UserDataShellScript, Content: "#!/bin/sh\ntrue\n"}}
	},
	ElementUserDataIgnition: func(p *Plan) {
		p.UserData = []UserData{{Type: UserDataIgnition, Content: `{"ignition":{"version":"3.3.0"}}`}}
	},
}
