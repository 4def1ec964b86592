package cloudinit

import (
	"github.com/nodeboot/nodeboot/provisioning"
)

// cloud-init has no systemd unit module, so both dialects desugar a Plan's
// units before rendering: each unit (and drop-in) becomes a file under
// /etc/systemd/system, written with the other files by write_files, and
// systemctl steps open runcmd, before the pre commands:
//
//	systemctl daemon-reload                       (always, once)
//	systemctl enable NAME                         (enabled: true)
//	systemctl disable --now NAME                  (enabled: false)
//	systemctl try-restart NAME                    (enabled unset)
//
// and, after the Plan's pre commands (which may install the unit's binary),
// before its bootstrap command:
//
//	systemctl restart NAME                        (enabled: true)
//
// write_files runs in cloud-init's init stage and runcmd in its final
// stage, long after systemd started the image's units; restart (rather
// than enable --now) is what makes a unit that is already running pick up
// its new contents and drop-ins, as it would under Ignition, which writes
// units before systemd starts them. try-restart does the same for a unit
// left as the image has it, and leaves it stopped if it was. A unit ordered
// after cloud-final.service must not be enabled this way: runcmd would
// wait for the start job of a unit that waits for runcmd.

// unitMode is the mode of the unit files the dialects write: what systemd
// and package managers install units with.
const unitMode = "0644"

// withUnits returns p with its Units desugared into Files and Commands, or
// p itself when it has none, so KubeadmConfig plans (which never have
// units) render untouched. The Units stay in the copy, so Validate still
// checks them; the emitters read only Files and Commands.
func withUnits(p *provisioning.Plan) *provisioning.Plan {
	if p == nil || len(p.Units) == 0 {
		return p
	}
	q := *p
	q.Files = make([]provisioning.File, len(p.Files), len(p.Files)+2*len(p.Units))
	copy(q.Files, p.Files)
	steps := []provisioning.Command{{Phase: provisioning.PhasePre, Script: "systemctl daemon-reload", Origin: provisioning.NewPath("units")}}
	var starts []provisioning.Command
	for i := range p.Units {
		u := &p.Units[i]
		origin := p.UnitPath(i)
		if u.Contents != "" {
			q.Files = append(q.Files, provisioning.File{Path: provisioning.UnitFile(u.Name), Owner: "root:root", Permissions: unitMode, Content: u.Contents, Origin: origin})
		}
		for j, d := range u.DropIns {
			q.Files = append(q.Files, provisioning.File{
				Path: provisioning.DropInFile(u.Name, d.Name), Owner: "root:root", Permissions: unitMode, Content: d.Contents,
				Origin: origin.Field("dropIns").Index(j),
			})
		}
		name := unitArg(u.Name)
		script := "systemctl try-restart " + name
		if u.Enabled != nil {
			script = "systemctl disable --now " + name
			if *u.Enabled {
				// Started after the Plan's pre commands, which may install
				// the unit's binary: what Unit.Enabled means.
				script = "systemctl enable " + name
				starts = append(starts, provisioning.Command{Phase: provisioning.PhasePre, Script: "systemctl restart " + name, Origin: origin})
			}
		}
		steps = append(steps, provisioning.Command{Phase: provisioning.PhasePre, Script: script, Origin: origin})
	}
	// The steps come first; the Plan's own commands keep naming their
	// index in the Plan, not in the desugared copy.
	q.Commands = make([]provisioning.Command, 0, len(steps)+len(p.Commands)+len(starts))
	q.Commands = append(q.Commands, steps...)
	for i, c := range p.Commands {
		c.Origin = p.CommandPath(i)
		q.Commands = append(q.Commands, c)
	}
	// CommandsIn keeps this order within a phase: the starts of enabled
	// units follow the Plan's pre commands and precede its bootstrap command.
	q.Commands = append(q.Commands, starts...)
	return &q
}

// unitArg is a unit name as one shell word. Validate admits only systemd's
// unit name characters, of which only the backslash of systemd's escapes
// (\x2d) means something to the shell.
func unitArg(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] == '\\' {
			return "'" + name + "'"
		}
	}
	return name
}
