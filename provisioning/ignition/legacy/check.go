package legacy

import (
	"fmt"
	"strconv"
	"strings"

	ign23types "github.com/flatcar/ignition/config/v2_3/types"

	ctypes "github.com/flatcar/container-linux-config-transpiler/config/types"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// legacyName names the legacy dialect in problems.
const legacyName = ignition.Format + " (legacy Ignition 2.3)"

// checkUnsupported reports every Plan feature the legacy layout cannot
// carry. What CABPK's webhook refuses for format: ignition (gzip encodings,
// bootCommands, inactive: true, a table type other than gpt, partition,
// replaceFS) is an error here too. What CABPK renders although it drops or
// inverts it (append, ntp.enabled: false, NTP servers without enabled,
// diskLayout, layout: false, mount sources that are not diskSetup labels)
// renders CABPK's bytes with a warning: Flatcar nodes boot from them today.
func (b *legacyBuilder) checkUnsupported() {
	p, ps := b.plan, &b.ps
	provisioning.WarnSharedShell(ps, p, legacyName)
	inputs := 0
	for i := range p.Files {
		f := &p.Files[i]
		pp := func(field string) provisioning.Path { return provisioning.FieldPath(f.Origin, p.FilePath(i), field) }
		switch f.Encoding {
		case provisioning.EncodingGzip, provisioning.EncodingGzipBase64:
			provisioning.Unsupported(ps, legacyName, pp("encoding"), fmt.Sprintf("encoding %q", f.Encoding))
		}
		if f.Permissions == "" {
			// The transpiler refuses a file without a mode, and so does CABPK.
			provisioning.Unsupported(ps, legacyName, pp("permissions"), "a file without permissions")
		}
		if n, err := strconv.Atoi(f.Permissions); err == nil && f.SpecialBits() && n > 0o7777 {
			// The layout writes the mode as a YAML number, decimal without
			// a leading 0 (a warning below), and the transpiler refuses
			// one over 07777 ("illegal file mode"), as in CABPK.
			provisioning.Unsupported(ps, legacyName, pp("permissions"), "a mode with setuid (read as the decimal number the layout writes, it is over 07777)")
		}
		if f.Append != nil && *f.Append {
			ps.Warnf(pp("append"), "append is not supported by the legacy %s layout: the file is written whole, replacing what is there (CABPK's behaviour; use Ignition v3 to append)", ignition.Format)
		}
		if f.BootstrapInput {
			inputs++
			if f.Path != legacyInputPath {
				ps.Errorf(pp("path"), "the legacy %s layout runs the bootstrap only while %s exists; the bootstrap input must be written there", ignition.Format, legacyInputPath)
			}
		}
	}
	b.checkRunOnce(inputs)
	for i := range p.Users {
		u := &p.Users[i]
		pp := func(field string) provisioning.Path { return provisioning.FieldPath(u.Origin, p.UserPath(i), field) }
		if u.Inactive != nil && *u.Inactive {
			provisioning.Unsupported(ps, legacyName, pp("inactive"), "inactive: true")
		}
		// cloud-init locks such a password; CABPK's legacy layout leaves it
		// usable. Flatcar users rely on that for console logins, so the bytes
		// stay CABPK's and the difference is a warning, not an error.
		// sudo's @includedir skips file names with a '.' or a trailing '~'
		// (sudoers(5)); CABPK names the file after the user, so such a
		// user's rule is written and never read. Ignition v3 names the
		// file so sudo reads it.
		if u.Sudo != "" && (strings.IndexByte(u.Name, '.') >= 0 || strings.HasSuffix(u.Name, "~")) {
			ps.Warnf(pp("sudo"), "is written to %s<name>, which sudo skips for a name with '.' or a trailing '~': the user gets no sudo (CABPK's behaviour; rename the user or use Ignition v3)", legacySudoersDir)
		}
		if u.Passwd != "" && (u.LockPassword == nil || *u.LockPassword) {
			ps.Warnf(pp("lockPassword"), "the legacy %s layout sets passwd as a usable password hash; it does not lock it as cloud-init does (set lockPassword: false to say so, or use Ignition v3)", ignition.Format)
		}
	}
	if n := p.NTP; n != nil {
		switch {
		case n.Enabled != nil && !*n.Enabled:
			ps.Warnf(p.SectionPath(provisioning.SectionNTP).Field("enabled"), "is false, but the legacy %s layout enables ntpd for any set value (CABPK's behaviour; the Plan's meaning, which Ignition v3 follows, is that false configures nothing)", ignition.Format)
		case n.Enabled == nil && len(n.Servers) > 0:
			ps.Warnf(p.SectionPath(provisioning.SectionNTP).Field("servers"), "are dropped: the legacy %s layout writes NTP servers only when enabled is set (CABPK's behaviour; set enabled: true)", ignition.Format)
		}
	}
	if len(p.BootCommands) > 0 {
		provisioning.Unsupported(ps, legacyName, p.SectionPath(provisioning.SectionBootCommands), "bootCommands")
	}
	if d := p.Disks; d != nil {
		for i, part := range d.Partitions {
			pp := p.SectionPath(provisioning.SectionPartitions).Index(i)
			if part.TableType != "" && part.TableType != "gpt" {
				provisioning.Unsupported(ps, legacyName, pp.Field("tableType"), fmt.Sprintf("tableType %q (Ignition writes GPT only)", part.TableType))
			}
			if len(part.DiskLayout) > 0 {
				ps.Warnf(pp.Field("diskLayout"), "is dropped by the legacy %s layout, which partitions only by layout (CABPK's behaviour; use Ignition v3)", ignition.Format)
			}
			if part.Layout != nil && !*part.Layout {
				ps.Warnf(pp.Field("layout"), "is false, but the legacy %s layout creates a whole-disk partition for any set value (CABPK's behaviour; leave layout unset not to partition)", ignition.Format)
			}
		}
		for i, fs := range d.Filesystems {
			pp := p.SectionPath(provisioning.SectionFilesystems).Index(i)
			if fs.Partition != "" {
				provisioning.Unsupported(ps, legacyName, pp.Field("partition"), "partition")
			}
			if fs.ReplaceFS != "" {
				provisioning.Unsupported(ps, legacyName, pp.Field("replaceFS"), "replaceFS")
			}
		}
	}
}

// mounts adds one mount unit per Plan mount; its first field must be the
// label of a diskSetup filesystem, which is how CABPK finds the device.
func (b *legacyBuilder) mounts() {
	devices := map[string]int{}
	if b.plan.Disks != nil {
		for i, fs := range b.plan.Disks.Filesystems {
			devices[fs.Label] = i
		}
	}
	for i, m := range b.plan.Mounts {
		pp := b.plan.SectionPath(provisioning.SectionMounts).Index(i)
		if len(m) < 2 {
			// CABPK's template indexes the mount point and fails.
			b.ps.Errorf(pp, "needs at least a device and a mount point in the legacy %s layout", ignition.Format)
			continue
		}
		label, where := m[0], m[1]
		fs, ok := devices[label]
		if !ok {
			b.ps.Warnf(pp.Index(0), "is not the label of a diskSetup filesystem, so the legacy %s layout writes a mount unit with an empty What= that fails at boot (CABPK's behaviour; name the filesystem's label)", ignition.Format)
		}
		if len(m) > 2 {
			b.ps.Warnf(pp, "the legacy layout writes every field after the mount point into Options=, joined with \",\", including a filesystem type, dump and pass")
		}
		blk := clcBlock{indent: 8, before: unitBlockHead, after: unitBlockTail}
		blk.text("[Unit]\nDescription = Mount ")
		blk.value(pp.Index(0), label, false)
		blk.text("\n\n[Mount]\nWhat=")
		if ok {
			blk.value(b.plan.SectionPath(provisioning.SectionFilesystems).Index(fs).Field("device"), b.plan.Disks.Filesystems[fs].Device, false)
		}
		blk.text("\nWhere=")
		blk.value(pp.Index(1), where, false)
		blk.text("\nOptions=")
		for j, o := range m[2:] {
			if j > 0 {
				blk.text(",")
			}
			blk.value(pp.Index(j+2), o, false)
		}
		blk.text("\n\n[Install]\nWantedBy=multi-user.target")
		contents := b.block(&blk)
		name := strings.TrimPrefix(strings.ReplaceAll(where, "/", "-"), "-") + ".mount"
		unit := ctypes.SystemdUnit{Name: b.plain(slotUnitName, pp.Index(1), name), Enabled: ptrTo(true), Contents: contents}
		// The mount point as read names the unit; CABPK's transpiler refuses a
		// name that reads without the .mount extension.
		legacyRefused(&b.ps, pp.Index(1), ign23types.Unit{Name: unit.Name}.ValidateName())
		b.cfg.Systemd.Units = append(b.cfg.Systemd.Units, unit)
	}
}

func (b *legacyBuilder) disks() {
	d := b.plan.Disks
	if d == nil {
		return
	}
	for i, part := range d.Partitions {
		out := ctypes.Disk{Device: b.plain(slotDisk, b.plan.SectionPath(provisioning.SectionPartitions).Index(i).Field("device"), part.Device)}
		if part.Overwrite != nil {
			out.WipeTable = *part.Overwrite
		}
		if part.Layout != nil {
			out.Partitions = []ctypes.Partition{{}}
		}
		b.cfg.Storage.Disks = append(b.cfg.Storage.Disks, out)
	}
	for i, fs := range d.Filesystems {
		pp := b.plan.SectionPath(provisioning.SectionFilesystems).Index(i)
		mount := &ctypes.Mount{
			Device: b.plain(slotFSMount, pp.Field("device"), fs.Device),
			Format: b.plain(slotFSMount, pp.Field("filesystem"), fs.Filesystem),
			Label:  b.plainPtr(slotFSMount, pp.Field("label"), fs.Label),
		}
		if fs.Overwrite != nil {
			mount.WipeFilesystem = *fs.Overwrite
		} else {
			// CABPK's template writes "wipe_filesystem: <nil>", which its
			// transpiler refuses: CABPK fails on such a config.
			b.ps.Errorf(pp.Field("overwrite"), "must be set in the legacy %s layout (CABPK's Ignition transpiler refuses the value CABPK writes for an unset one)", ignition.Format)
		}
		opts := func(j int) provisioning.Path { return pp.Field("extraOpts").Index(j) }
		mount.Options = b.items(opts, fs.ExtraOpts, slotFSOption)
		b.cfg.Storage.Filesystems = append(b.cfg.Storage.Filesystems, ctypes.Filesystem{Name: b.plain(slotFSName, pp.Field("label"), fs.Label), Mount: mount})
	}
}
