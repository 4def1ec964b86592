package ignitionv3

import "github.com/coreos/ignition/v2/config/v3_5/types"

// units adds the Plan's systemd units as native Ignition units, with their
// drop-ins and enabled state: Ignition writes them before systemd starts,
// so a unit runs with its drop-ins from the first boot on, and enabled is
// applied as a preset. It runs after the rest of the build, so that a Plan
// unit named like a unit the dialect generates (the bootstrap and
// boot-command units, mount units) is an error naming the
// Plan's unit rather than a duplicate in Ignition's report.
func (b *v3Builder) units() {
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
		if generated[u.Name] {
			b.ps.Errorf(p.UnitPath(i).Member("name"), "is a unit the %s dialect generates for the Plan's commands, boot commands, mounts or NTP", v3Name)
			continue
		}
		out := types.Unit{Name: u.Name, Enabled: u.Enabled}
		if u.Contents != "" {
			out.Contents = ptrTo(u.Contents)
		}
		for _, d := range u.DropIns {
			out.Dropins = append(out.Dropins, types.Dropin{Name: d.Name, Contents: ptrTo(d.Contents)})
		}
		b.cfg.Systemd.Units = append(b.cfg.Systemd.Units, out)
	}
}
