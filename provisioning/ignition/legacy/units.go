package legacy

import (
	_ "embed"

	ctypes "github.com/flatcar/container-linux-config-transpiler/config/types"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// The legacy dialect serves two kinds of Plan.
//
// A Plan with a bootstrap input file is a kubeadm Plan and gets CABPK's
// layout byte for byte: kubeadm.service runs /etc/kubeadm.sh while
// /etc/kubeadm.yml exists, and the script moves that file away after the
// bootstrap command succeeded. Such a Plan needs its input at
// /etc/kubeadm.yml and exactly one bootstrap command, as CABPK's does.
//
// A Plan without one (a k3s or RKE2 provider's, say) has no file whose
// presence can mean "not bootstrapped yet", so the layout names nothing of
// kubeadm: nodeboot-bootstrap.service runs /etc/nodeboot/bootstrap.sh
// unless /var/lib/nodeboot/bootstrap.done exists, and the script stamps
// that file where CABPK's moves the input away, as Ignition v3's
// first-boot unit does. Without commands or a sentinel there is neither.
//
// The Plan's own units (Plan.Units) follow the generated ones in
// systemd.units, each placed in CABPK's CLC as its template places unit
// contents: a literal block read back as YAML reads it.

const (
	legacyGenericScript = "/etc/nodeboot/bootstrap.sh"
	legacyGenericUnit   = "nodeboot-bootstrap.service"
	legacyDoneStamp     = "/var/lib/nodeboot/bootstrap.done"
)

//go:embed assets/legacy-bootstrap.service
var legacyGenericUnitContents string

// The literal block of a drop-in's contents in CLC.
const (
	dropInBlockHead   = "systemd:\n  units:\n    - name: x.service\n      dropins:\n        - name: x.conf\n          contents: |\n"
	dropInBlockTail   = "\n        - name: y.conf\n    - name: x.mount\n"
	dropInBlockIndent = 12
)

// kubeadmLayout reports whether the Plan gets CABPK's kubeadm layout.
func (b *legacyBuilder) kubeadmLayout() bool {
	for i := range b.plan.Files {
		if b.plan.Files[i].BootstrapInput {
			return true
		}
	}
	return false
}

// runsCommands reports whether the generic layout needs its unit and script.
func (b *legacyBuilder) runsCommands() bool {
	return len(b.plan.Commands) > 0 || b.plan.Sentinel != ""
}

// checkRunOnce reports what CABPK's layout needs of a kubeadm Plan; inputs
// is the number of bootstrap input files.
func (b *legacyBuilder) checkRunOnce(inputs int) {
	if inputs == 0 {
		return
	}
	if inputs != 1 {
		b.ps.Errorf(provisioning.NewPath("files"), "the legacy %s layout needs exactly one bootstrap input file, found %d", ignition.Format, inputs)
	}
	if len(b.plan.CommandsIn(provisioning.PhaseBootstrap)) != 1 {
		b.ps.Errorf(provisioning.NewPath("commands"), "the legacy %s layout needs exactly one bootstrap command when the Plan has a bootstrap input", ignition.Format)
	}
}

// bootstrapUnit adds the unit that runs the script.
func (b *legacyBuilder) bootstrapUnit() {
	switch {
	case b.kubeadmLayout():
		b.cfg.Systemd.Units = append(b.cfg.Systemd.Units, ctypes.SystemdUnit{Name: legacyUnitName, Enabled: ptrTo(true), Contents: legacyUnit})
	case b.runsCommands():
		b.cfg.Systemd.Units = append(b.cfg.Systemd.Units, ctypes.SystemdUnit{Name: legacyGenericUnit, Enabled: ptrTo(true), Contents: legacyGenericUnitContents})
	}
}

// bootstrapScript adds the script the bootstrap unit runs.
func (b *legacyBuilder) bootstrapScript() {
	path := legacyScriptPath
	if !b.kubeadmLayout() {
		if !b.runsCommands() {
			return
		}
		path = legacyGenericScript
	}
	script := b.script()
	b.cfg.Storage.Files = append(b.cfg.Storage.Files, b.generatedFile(path, 0o700, &script))
}

// runOnceLine is the script's line that keeps the unit from running again.
func (b *legacyBuilder) runOnceLine() string {
	if b.kubeadmLayout() {
		return "mv " + legacyInputPath + " /tmp/\n"
	}
	return "mkdir -p /var/lib/nodeboot && touch " + legacyDoneStamp + "\n"
}

// units adds the Plan's units after the generated ones.
func (b *legacyBuilder) units() {
	p := b.plan
	if len(p.Units) == 0 {
		return
	}
	generated := make(map[string]bool, len(b.cfg.Systemd.Units))
	for _, u := range b.cfg.Systemd.Units {
		generated[u.Name] = true
	}
	for i := range p.Units {
		u := &p.Units[i]
		up := p.UnitPath(i)
		if generated[u.Name] {
			b.ps.Errorf(up.Member("name"), "is a unit the %s layout generates for the Plan's commands, mounts or NTP", legacyName)
			continue
		}
		out := ctypes.SystemdUnit{Name: b.plain(slotUnitName, up.Member("name"), u.Name), Enabled: u.Enabled}
		if u.Contents != "" {
			blk := clcBlock{indent: 8, before: unitBlockHead, after: unitBlockTail}
			out.Contents = b.unitBlock(&blk, up.Member("contents"), u.Contents)
		}
		for j, d := range u.DropIns {
			dp := up.Member("dropIns").Index(j)
			blk := clcBlock{indent: dropInBlockIndent, before: dropInBlockHead, after: dropInBlockTail}
			out.Dropins = append(out.Dropins, ctypes.SystemdUnitDropIn{Name: b.plain(slotUnitName, dp.Field("name"), d.Name), Contents: b.unitBlock(&blk, dp.Field("contents"), d.Contents)})
		}
		b.cfg.Systemd.Units = append(b.cfg.Systemd.Units, out)
	}
}

// unitBlock reads contents placed in blk as CABPK's YAML would. Units come
// only from the library API, never from a KubeadmConfig, so there are no
// CABPK bytes to keep: contents the literal block would change (line
// breaks other than LF, control characters, a first line's indentation)
// are an error rather than CABPK's warning. YAML's clipping of trailing
// empty lines, harmless to systemd, is not a change.
func (b *legacyBuilder) unitBlock(blk *clcBlock, field provisioning.Path, contents string) string {
	blk.value(field, contents, true)
	r := blk.read()
	if !r.ok() || len(r.changed) > 0 || r.reindented {
		b.ps.Errorf(field, "cannot be carried unchanged by the %s layout, which places unit contents in a YAML literal block (line breaks other than LF, control characters or an indented first line); use Ignition v3", legacyName)
	}
	return r.content
}
