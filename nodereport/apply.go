package nodereport

import (
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Paths on the node. /opt and /var are writable on Flatcar (whose /usr is
// read-only) and on Ubuntu alike.
const (
	// ScriptPath is the reporter program.
	ScriptPath = "/opt/nodeboot/bin/nodeboot-report"
	// ConfigDir holds url, token, ca.crt and settings.
	ConfigDir = "/etc/nodeboot/report"
	// StateDir holds the spool and the step markers.
	StateDir = "/var/lib/nodeboot/report"
	// SpoolDir holds the reports not yet answered by the server.
	SpoolDir = StateDir + "/spool"
	// cloudInitLog is where cloud-init's default output setting tees the
	// output of every command.
	cloudInitLog = "/var/log/cloud-init-output.log"
	// bootFailed records the first failed boot command: bootcmd runs
	// before write_files, so before the reporter exists.
	bootFailed = StateDir + "/bootcmd-failed"
)

// systemd units the Ignition targets get, as plain files: Ignition writes
// files before systemd starts, and a drop-in needs no change to the unit
// the renderer writes.
const (
	unitDir       = "/etc/systemd/system/"
	senderUnit    = "nodeboot-report.service"
	failureUnit   = "nodeboot-report-failed@.service"
	dropIn        = ".d/10-nodeboot-report.conf"
	legacyUnit    = "kubeadm.service"            // ignition/legacy/clc.go
	v3Unit        = "nodeboot-bootstrap.service" // ignition/v3/build.go
	v3BootcmdUnit = "nodeboot-bootcmd.service"   // ignition/v3/build.go
)

const run = "sh " + ScriptPath

// Apply adds the reporter to plan: its program, credential, CA and settings
// as files, and around the Plan's commands the lines that report them. The
// commands keep their text, order and shell; Apply validates o first.
func Apply(plan *provisioning.Plan, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if plan == nil {
		return fmt.Errorf("%w: no plan", ErrInvalidPlan)
	}
	for _, f := range plan.Files {
		if f.Path == ScriptPath {
			return fmt.Errorf("%w: it already has the reporter (%s)", ErrInvalidPlan, ScriptPath)
		}
	}
	plan.Files = append(plan.Files, files(plan, o)...)
	if o.Target == CloudInit {
		plan.BootCommands = cloudInitBoot(plan.BootCommands, o.FailFast)
		plan.Commands = cloudInitCommands(plan.Commands, o.FailFast)
	} else {
		if o.Target == IgnitionV3 {
			plan.BootCommands = ignitionBoot(plan.BootCommands)
		}
		plan.Commands = ignitionCommands(plan.Commands)
	}
	return nil
}

func files(plan *provisioning.Plan, o Options) []provisioning.File {
	settings := "target=" + o.Target.String() + "\nsentinel=" + plan.Sentinel + "\nfailfast=" + strconv.FormatBool(o.FailFast) + "\n"
	// The script travels compressed where the target inflates it; legacy
	// Ignition 2.3 cannot, and base64 keeps it out of CABPK's YAML there.
	scriptFile := provisioning.File{Path: ScriptPath, Owner: "root:root", Permissions: "0700", Encoding: provisioning.EncodingGzipBase64, Content: gzipped}
	if o.Target == CloudInit {
		settings += "log=" + cloudInitLog + "\nwaiter=true\n"
	} else {
		settings += "systemd=true\n"
	}
	if o.Target == IgnitionLegacy {
		scriptFile.Encoding, scriptFile.Content = provisioning.EncodingBase64, base64.StdEncoding.EncodeToString([]byte(script))
	}
	out := []provisioning.File{
		scriptFile,
		{Path: ConfigDir + "/url", Owner: "root:root", Permissions: "0600", Content: o.URL + "\n"},
		{Path: ConfigDir + "/token", Owner: "root:root", Permissions: "0600", Content: o.Credential},
		{Path: ConfigDir + "/settings", Owner: "root:root", Permissions: "0600", Content: settings},
	}
	if len(o.CABundle) > 0 {
		out = append(out, provisioning.File{Path: ConfigDir + "/ca.crt", Owner: "root:root", Permissions: "0644", Content: string(o.CABundle)})
	}
	if o.Target == CloudInit {
		return out
	}
	unit := v3Unit
	if o.Target == IgnitionLegacy {
		unit = legacyUnit
	}
	onFailure := "[Unit]\nOnFailure=nodeboot-report-failed@%n.service\n"
	out = append(out,
		provisioning.File{Path: unitDir + senderUnit, Owner: "root:root", Permissions: "0644", Content: "[Unit]\nDescription=nodeboot bootstrap report sender\n" +
			"Wants=network-online.target\nAfter=network-online.target\n\n[Service]\nType=oneshot\nExecStart=/bin/sh " + ScriptPath + " send\n"},
		provisioning.File{Path: unitDir + failureUnit, Owner: "root:root", Permissions: "0644", Content: "[Unit]\nDescription=nodeboot bootstrap report: %i failed\n\n" +
			"[Service]\nType=oneshot\nExecStart=/bin/sh " + ScriptPath + " unit-failed %i\n"},
		provisioning.File{Path: unitDir + unit + dropIn, Owner: "root:root", Permissions: "0644", Content: onFailure},
	)
	if o.Target == IgnitionV3 && len(plan.BootCommands) > 0 {
		out = append(out, provisioning.File{Path: unitDir + v3BootcmdUnit + dropIn, Owner: "root:root", Permissions: "0644", Content: onFailure})
	}
	return out
}

// cloudInitBoot adds after each boot command a line that records its first
// failure for the reporter's started report (bootcmd runs before
// write_files, so the reporter does not exist yet) and hands $? on.
func cloudInitBoot(cmds []string, failFast bool) []string {
	if len(cmds) == 0 {
		return cmds
	}
	out := make([]string, 0, 2*len(cmds))
	for i, c := range cmds {
		step := fmt.Sprintf("bootCommands[%d]", i)
		line := `nodeboot_rc=$?; [ "$nodeboot_rc" = 0 ] || [ -s ` + bootFailed + ` ] || { mkdir -p ` + StateDir + ` && echo '` + step + `' "$nodeboot_rc" > ` + bootFailed + `; }; `
		if failFast {
			line += `[ "$nodeboot_rc" = 0 ] || exit "$nodeboot_rc"`
		} else {
			line += `(exit "$nodeboot_rc")`
		}
		out = append(out, c, line)
	}
	return out
}

// ignitionBoot marks each boot command before it runs: the script is under
// set -e, and the boot unit's OnFailure= handler reports the marked step.
func ignitionBoot(cmds []string) []string {
	if len(cmds) == 0 {
		return cmds
	}
	out := make([]string, 0, 2*len(cmds))
	for i, c := range cmds {
		out = append(out, fmt.Sprintf("%s bootstep 'bootCommands[%d]' || :", run, i), c)
	}
	return out
}

// byPhase splits commands by phase, keeping their order, and names each
// step as the report names it.
func byPhase(cmds []provisioning.Command) (pre, boot, post []provisioning.Command, steps map[*provisioning.Command]string) {
	for _, c := range cmds {
		switch c.Phase {
		case provisioning.PhasePre:
			pre = append(pre, c)
		case provisioning.PhaseBootstrap:
			boot = append(boot, c)
		default:
			post = append(post, c)
		}
	}
	steps = map[*provisioning.Command]string{}
	name(pre, "preKubeadmCommands", steps)
	for i := range boot {
		steps[&boot[i]] = "kubeadm"
	}
	name(post, "postKubeadmCommands", steps)
	return pre, boot, post, steps
}

// originIndex is i when origin ends in list[i] (spec.preKubeadmCommands[i]).
func originIndex(origin provisioning.Path, list string) (int, bool) {
	e := origin.Elements()
	if len(e) < 2 {
		return 0, false
	}
	f, i := e[len(e)-2], e[len(e)-1]
	if f.Kind != provisioning.FieldElement || f.Name != list || i.Kind != provisioning.IndexElement || i.Index < 0 || i.Index > 9999 {
		return 0, false
	}
	return i.Index, true
}

// name takes a step's index from its Origin (the KubeadmConfig field it
// came from). A generated command (the add-on apply step) has none: it is
// numbered after the spec's commands, so it never borrows a user's index.
func name(cmds []provisioning.Command, list string, steps map[*provisioning.Command]string) {
	next := 0
	for i := range cmds {
		if n, ok := originIndex(cmds[i].Origin, list); ok {
			next = max(next, n+1)
		}
	}
	for i := range cmds {
		if n, ok := originIndex(cmds[i].Origin, list); ok {
			steps[&cmds[i]] = list + "[" + strconv.Itoa(n) + "]"
			continue
		}
		steps[&cmds[i]] = list + "[" + strconv.Itoa(next) + "]"
		next++
	}
}

// cloudInitCommands: started first; after every command a check that
// reports a failure and exits with the command's status, so $? and the
// runcmd script's own status stay what they were; finish last. Fail-fast
// ends the script at the first failure.
func cloudInitCommands(cmds []provisioning.Command, failFast bool) []provisioning.Command {
	pre, boot, post, steps := byPhase(cmds)
	check := func(phase provisioning.Phase, step string) provisioning.Command {
		s := run + ` check "$?" '` + step + `'`
		if failFast {
			s += " || exit"
		}
		return provisioning.Command{Phase: phase, Script: s}
	}
	out := []provisioning.Command{{Phase: provisioning.PhasePre, Script: run + " started"}}
	for i := range pre {
		out = append(out, pre[i], check(provisioning.PhasePre, steps[&pre[i]]))
	}
	out = append(out, boot...)
	// The bootstrap command's check must follow it, and cloud-init writes
	// the bootstrap command between the pre and post commands.
	for i := range boot {
		out = append(out, check(provisioning.PhasePost, steps[&boot[i]]))
	}
	for i := range post {
		out = append(out, post[i], check(provisioning.PhasePost, steps[&post[i]]))
	}
	return append(out, provisioning.Command{Phase: provisioning.PhasePost, Script: run + ` finish "$?"`})
}

// ignitionCommands: under set -e no line after a failing command runs, so
// each step is marked before it; the OnFailure= handler reports the mark.
// The reporter's own lines never fail the script.
func ignitionCommands(cmds []provisioning.Command) []provisioning.Command {
	pre, boot, post, steps := byPhase(cmds)
	mark := func(phase provisioning.Phase, step string) provisioning.Command {
		return provisioning.Command{Phase: phase, Script: run + " step '" + step + "' || :"}
	}
	out := []provisioning.Command{{Phase: provisioning.PhasePre, Script: run + " started || :"}}
	for i := range pre {
		out = append(out, mark(provisioning.PhasePre, steps[&pre[i]]), pre[i])
	}
	for i := range boot {
		out = append(out, mark(provisioning.PhasePre, steps[&boot[i]]))
	}
	out = append(out, boot...)
	for i := range post {
		out = append(out, mark(provisioning.PhasePost, steps[&post[i]]), post[i])
	}
	return append(out, provisioning.Command{Phase: provisioning.PhasePost, Script: run + " finish 0 || :"})
}
