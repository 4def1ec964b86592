package conformance

import (
	"os"

	"github.com/nodeboot/nodeboot/provisioning"
)

// LogFile is where the Cases' commands append their lines, each as
// "<seconds since the epoch with nanoseconds> <text>", so a runner can merge
// them in time order with the systemctl calls a stub records (SystemctlStub).
const LogFile = "/var/log/conformance.log"

// Sentinel is the sentinel path of every Case.
const Sentinel = "/run/conformance/success"

// SystemctlStub is a systemctl that records its arguments in LogFile, for
// roots where systemd does not run: a runner installs it (as
// /usr/local/bin/systemctl) so that Case.Verify sees which units were
// enabled and started, and when.
const SystemctlStub = "#!/bin/sh\nprintf '%s systemctl %s\\n' \"$(date +%s.%N)\" \"$*\" >> " + LogFile + "\n"

// Case is one Plan and the node it must give.
type Case struct {
	Name string
	// Plan returns a new Plan each call, so runners may render it with
	// any provisioner without sharing state.
	Plan func() *provisioning.Plan
	// Uses are the Elements the Plan needs. A format whose Capabilities
	// lack one must refuse the Plan with ErrUnsupported at that element's
	// field; a format that has them all must produce Want.
	Uses []provisioning.Element
	Want State
	// Metadata is the instance metadata the node's cloud serves, for Plans
	// with per-node values: a runner seeds it where the tool reads it
	// (NoCloudMetaData, FlatcarMetadata).
	Metadata map[provisioning.NodeValue]string
}

// State is what a node must hold after the first boot.
type State struct {
	Files  []File
	Absent []string
	Users  []User
	Units  []Unit
	// Log is the lines the commands wrote to LogFile, in order, without
	// their timestamps.
	Log []string
	// ExitCode is the exit status of the failing command, 0 when every
	// command succeeds: the boot's commands end with it.
	ExitCode int
	// Contains are files that must hold a text, such as a server in the
	// time client's configuration, wherever the image keeps it: any one of
	// Paths will do.
	Contains []Contains
}

// File is a file with its exact content, permission bits and owner
// ("user:group" by name).
type File struct {
	Path    string
	Content string
	Mode    os.FileMode
	Owner   string
}

// User is an account with the groups it belongs to, a rule `sudo -l -U`
// must list for it, and its ssh keys.
type User struct {
	Name    string
	Groups  []string
	Sudo    string
	SSHKeys []string
}

// Unit is a systemd unit with its drop-ins. Enabled units must be enabled
// and, unless StartedAfter is empty, started after StartedAfter, a Log line
// (the command that installs the unit's binary).
type Unit struct {
	Name         string
	Contents     string
	DropIns      map[string]string
	Enabled      bool
	StartedAfter string
}

// Contains is a text one of Paths must contain.
type Contains struct {
	Paths []string
	Text  string
}

// log is a command that appends text to LogFile with a timestamp.
func log(text string) string {
	return `echo "$(date +%s.%N) ` + text + `" >> ` + LogFile
}

const (
	demoUnit    = "conformance-demo.service"
	demoBinary  = "/usr/local/bin/conformance-demo"
	demoContent = "[Unit]\nDescription=conformance demo\n\n[Service]\nExecStart=" + demoBinary +
		"\nRestart=on-failure\n\n[Install]\nWantedBy=multi-user.target\n"
	demoDropIn = "[Service]\nEnvironment=DEMO=1\n"
	sshKey     = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIConformanceTestKeyOnly00000000000000000000 jane.doe@conformance"
	ntpServer  = "ntp.conformance.example"
)

// Cases is the table every provisioner is held to.
func Cases() []Case {
	cases := append([]Case{nodeCase(), failingCase(), ntpCase()}, ElementCases()...)
	return append(cases, append(nodeValueCases(), userDataCases()...)...)
}

// nodeCase is a node as an RKE2-style provider sets one up: a config file,
// a file owned by the account the Plan creates, a sudo user whose name has a
// dot, an enabled unit with a drop-in whose binary a pre command installs,
// and commands that show each runs in its own shell and that exit 0 ends
// only its own command.
func nodeCase() Case {
	enabled := true
	return Case{
		Name: "node",
		Plan: func() *provisioning.Plan {
			return &provisioning.Plan{
				Role: provisioning.RoleJoinWorker,
				Files: []provisioning.File{
					{Path: "/etc/conformance/config.yaml", Owner: "root:root", Permissions: "0600", Content: "server: https://192.0.2.10:9345\ntoken: {{ not-a-template }}\n"},
					{Path: "/etc/conformance/owned.conf", Owner: "jane.doe:ops", Permissions: "0640", Content: "owned by the Plan's user\n"},
				},
				Users: []provisioning.User{{
					Name: "jane.doe", Groups: "ops", Shell: "/bin/sh", Sudo: "ALL=(ALL) NOPASSWD:ALL",
					SSHAuthorizedKeys: []string{sshKey},
				}},
				Units: []provisioning.Unit{{
					Name: demoUnit, Enabled: &enabled, Contents: demoContent,
					DropIns: []provisioning.DropIn{{Name: "10-env.conf", Contents: demoDropIn}},
				}},
				Commands: []provisioning.Command{
					{Phase: provisioning.PhasePre, Script: "NB_CONFORMANCE=leaked\ncd /tmp\n" + log("pre1")},
					{Phase: provisioning.PhasePre, Script: log("pre2 var=${NB_CONFORMANCE:-unset} pwd=$(pwd)")},
					{Phase: provisioning.PhasePre, Script: "printf '#!/bin/sh\\nexec sleep infinity\\n' > " + demoBinary +
						"\nchmod 0755 " + demoBinary + "\n" + log("installed") + "\nexit 0\n" + log("after-exit")},
					{Phase: provisioning.PhaseBootstrap, Script: log("bootstrap")},
					{Phase: provisioning.PhasePost, Script: log("post")},
				},
				Sentinel: Sentinel,
			}
		},
		Uses: []provisioning.Element{
			provisioning.ElementFiles, provisioning.ElementFileOwner, provisioning.ElementUsers,
			provisioning.ElementUserSudo, provisioning.ElementUserSSHKeys, provisioning.ElementUnits,
			provisioning.ElementUnitDropIns, provisioning.ElementCommands, provisioning.ElementSentinel,
		},
		Want: State{
			Files: []File{
				{Path: "/etc/conformance/config.yaml", Content: "server: https://192.0.2.10:9345\ntoken: {{ not-a-template }}\n", Mode: 0o600, Owner: "root:root"},
				{Path: "/etc/conformance/owned.conf", Content: "owned by the Plan's user\n", Mode: 0o640, Owner: "jane.doe:ops"},
				{Path: provisioning.UnitFile(demoUnit), Content: demoContent, Mode: 0o644, Owner: "root:root"},
				{Path: Sentinel, Content: "success\n", Mode: 0o644, Owner: "root:root"},
			},
			Users: []User{{Name: "jane.doe", Groups: []string{"ops"}, Sudo: "(ALL) NOPASSWD: ALL", SSHKeys: []string{sshKey}}},
			Units: []Unit{{Name: demoUnit, Contents: demoContent, DropIns: map[string]string{"10-env.conf": demoDropIn}, Enabled: true, StartedAfter: "installed"}},
			Log:   []string{"pre1", "pre2 var=unset pwd=/", "installed", "bootstrap", "post"},
		},
	}
}

// failingCase: a failing pre command stops the boot with its exit code;
// the later commands, the bootstrap command, the post command and the
// sentinel do not run.
func failingCase() Case {
	return Case{
		Name: "failing-command",
		Plan: func() *provisioning.Plan {
			return &provisioning.Plan{
				Role:  provisioning.RoleJoinWorker,
				Files: []provisioning.File{{Path: "/etc/conformance/before", Permissions: "0644", Content: "written before any command\n"}},
				Commands: []provisioning.Command{
					{Phase: provisioning.PhasePre, Script: log("pre1")},
					{Phase: provisioning.PhasePre, Script: log("pre2") + "\n(exit 3)\n" + log("after-failure")},
					{Phase: provisioning.PhasePre, Script: log("pre3")},
					{Phase: provisioning.PhaseBootstrap, Script: log("bootstrap")},
					{Phase: provisioning.PhasePost, Script: log("post")},
				},
				Sentinel: Sentinel,
			}
		},
		Uses: []provisioning.Element{provisioning.ElementFiles, provisioning.ElementCommands, provisioning.ElementSentinel},
		Want: State{
			Files:    []File{{Path: "/etc/conformance/before", Content: "written before any command\n", Mode: 0o644, Owner: "root:root"}},
			Absent:   []string{Sentinel},
			Log:      []string{"pre1", "pre2"},
			ExitCode: 3,
		},
	}
}

// ntpCase: time synchronisation with the Plan's server, in the time
// client's configuration.
func ntpCase() Case {
	enabled := true
	return Case{
		Name: "ntp",
		Plan: func() *provisioning.Plan {
			return &provisioning.Plan{
				Role:     provisioning.RoleJoinWorker,
				NTP:      &provisioning.NTP{Enabled: &enabled, Servers: []string{ntpServer}},
				Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: log("bootstrap")}},
				Sentinel: Sentinel,
			}
		},
		Uses: []provisioning.Element{provisioning.ElementNTP, provisioning.ElementCommands, provisioning.ElementSentinel},
		Want: State{
			Contains: []Contains{{Paths: []string{"/etc/chrony/chrony.conf", "/etc/chrony.conf", "/etc/ntp.conf"}, Text: ntpServer}},
			Log:      []string{"bootstrap"},
		},
	}
}
