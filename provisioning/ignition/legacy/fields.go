package legacy

import (
	ign23types "github.com/flatcar/ignition/config/v2_3/types"
	"github.com/flatcar/ignition/config/validate/report"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// legacyFieldProblems names the fields behind the transpiler's findings on
// disks and filesystems (each built from one Plan partition or filesystem,
// in order), so a refusal points at the spec field as CABPK's failure on
// the same config does. Findings it cannot place are left to the caller.
func legacyFieldProblems(p *provisioning.Plan, cfg *ign23types.Config) provisioning.Problems {
	var ps provisioning.Problems
	add := func(path provisioning.Path, r report.Report) {
		// CABPK converts its CLC strictly: warnings fail it too.
		for _, e := range r.Entries {
			ps.Wrapf(path, ignition.ErrInvalidOutput, "CABPK's Ignition transpiler refuses it: %s", e.Message)
		}
	}
	if d := p.Disks; d != nil && len(d.Partitions) == len(cfg.Storage.Disks) {
		for i, disk := range cfg.Storage.Disks {
			add(p.SectionPath(provisioning.SectionPartitions).Index(i).Field("device"), disk.ValidateDevice())
		}
	}
	if d := p.Disks; d != nil && len(d.Filesystems) == len(cfg.Storage.Filesystems) {
		for i, fs := range cfg.Storage.Filesystems {
			if m := fs.Mount; m != nil {
				pp := p.SectionPath(provisioning.SectionFilesystems).Index(i)
				add(pp.Field("filesystem"), m.Validate())
				add(pp.Field("device"), m.ValidateDevice())
				add(pp.Field("label"), m.ValidateLabel())
			}
		}
	}
	return ps
}

// legacyRefused adds, at path, the errors the transpiler's validator
// reported on the value read there: CABPK fails on them, and so the render.
func legacyRefused(ps *provisioning.Problems, path provisioning.Path, r report.Report) {
	for _, e := range r.Entries {
		if e.Kind == report.EntryError {
			ps.Wrapf(path, ignition.ErrInvalidOutput, "CABPK's Ignition transpiler refuses it: %s", e.Message)
		}
	}
}
