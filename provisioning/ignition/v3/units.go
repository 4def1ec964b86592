package ignitionv3

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"
	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/nodeboot/nodeboot/provisioning"
)

// gptTypes maps CABPK's partition type names to GPT type GUIDs; Ignition
// partitions only GPT, so MBR-only types have none.
var gptTypes = map[string]string{
	"Linux":     "0FC63DAF-8483-4772-8E79-3D69D8477DE4",
	"LinuxSwap": "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F",
	"LinuxRAID": "A19D880F-05FC-4D3B-A006-743F0F84911E",
	"LVM":       "E6D6D379-F507-44C2-A23C-238F2A3DF928",
	"Fat32":     "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7",
	"NTFS":      "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7",
}

func (b *v3Builder) disks() {
	d := b.plan.Disks
	if d == nil {
		return
	}
	for i, part := range d.Partitions {
		pp := b.plan.SectionPath(provisioning.SectionPartitions).Index(i)
		if part.TableType != "" && part.TableType != "gpt" {
			provisioning.Unsupported(&b.ps, v3Name, pp.Field("tableType"), fmt.Sprintf("tableType %q (Ignition writes GPT partition tables only)", part.TableType))
		}
		disk := types.Disk{Device: part.Device, WipeTable: part.Overwrite}
		switch {
		case len(part.DiskLayout) > 0:
			for j, s := range part.DiskLayout {
				sp := pp.Field("diskLayout").Index(j)
				if len(part.DiskLayout) > 1 || s.Percentage != 100 {
					provisioning.Unsupported(&b.ps, v3Name, sp.Field("percentage"),
						fmt.Sprintf("a partition of %d%% (Ignition sizes partitions in MiB; only one partition over the whole disk, 100%%, can be expressed)", s.Percentage))
				}
				p := types.Partition{Number: j + 1}
				if s.PartitionType != "" {
					guid, ok := gptTypes[s.PartitionType]
					if !ok && isGUID(s.PartitionType) {
						guid, ok = s.PartitionType, true
					}
					if !ok {
						provisioning.Unsupported(&b.ps, v3Name, sp.Field("partitionType"), fmt.Sprintf("partition type %q (Ignition needs a GPT type: Linux, LinuxSwap, LinuxRAID, LVM, Fat32, NTFS or a GUID)", s.PartitionType))
					}
					p.TypeGUID = ptrTo(guid)
				}
				disk.Partitions = append(disk.Partitions, p)
			}
		case part.Layout != nil && *part.Layout:
			disk.Partitions = []types.Partition{{Number: 1}}
		}
		b.cfg.Storage.Disks = append(b.cfg.Storage.Disks, disk)
	}
	for i, fs := range d.Filesystems {
		pp := b.plan.SectionPath(provisioning.SectionFilesystems).Index(i)
		if fs.ReplaceFS != "" {
			provisioning.Unsupported(&b.ps, v3Name, pp.Field("replaceFS"), "replaceFS (Ignition cannot replace only a filesystem of a given type)")
		}
		out := types.Filesystem{Device: b.partitionDevice(pp, fs), Format: ptrTo(fs.Filesystem), WipeFilesystem: fs.Overwrite}
		if fs.Label != "" {
			out.Label = ptrTo(fs.Label)
		}
		for _, o := range fs.ExtraOpts {
			out.Options = append(out.Options, types.FilesystemOption(o))
		}
		b.cfg.Storage.Filesystems = append(b.cfg.Storage.Filesystems, out)
	}
}

// partitionDevice applies cloud-init's partition field: a number names that
// partition of the device, "none" (or nothing) the device itself.
func (b *v3Builder) partitionDevice(pp provisioning.Path, fs provisioning.Filesystem) string {
	switch fs.Partition {
	case "", "none":
		return fs.Device
	}
	n, err := strconv.Atoi(fs.Partition)
	if err != nil || n < 1 {
		provisioning.Unsupported(&b.ps, v3Name, pp.Field("partition"), fmt.Sprintf("partition %q (Ignition needs the partition's number; auto and any search the disk at boot)", fs.Partition))
		return fs.Device
	}
	if last := fs.Device[len(fs.Device)-1]; last >= '0' && last <= '9' {
		return fs.Device + "p" + fs.Partition // nvme0n1p1, mmcblk0p1
	}
	return fs.Device + fs.Partition
}

func isGUID(s string) bool {
	return len(s) == 36 && strings.Count(s, "-") == 4
}

// mounts writes one systemd mount unit per fstab-style entry.
func (b *v3Builder) mounts() {
	labels := map[string]string{}
	if b.plan.Disks != nil {
		for _, fs := range b.plan.Disks.Filesystems {
			labels[fs.Label] = fs.Device
		}
	}
	for i, m := range b.plan.Mounts {
		pp := b.plan.SectionPath(provisioning.SectionMounts).Index(i)
		if len(m) < 2 {
			continue // Plan.Validate reports it.
		}
		field := func(j int) string {
			if j < len(m) {
				return m[j]
			}
			return ""
		}
		where := m[1]
		if where == "none" || where == "swap" || field(2) == "swap" {
			provisioning.Unsupported(&b.ps, v3Name, pp, "a swap entry")
			continue
		}
		if !path.IsAbs(where) {
			b.ps.Errorf(pp.Index(1), "mount point must be absolute, got %q", where)
			continue
		}
		if d := field(4); d != "" && d != "0" {
			provisioning.Unsupported(&b.ps, v3Name, pp.Index(4), "dump (systemd mount units have no dump frequency)")
		}
		for j, v := range m {
			if strings.ContainsAny(v, "\n\r") {
				b.ps.Errorf(pp.Index(j), "must not contain a line break")
			}
		}
		what := mountSource(m[0], labels)
		var c strings.Builder
		c.WriteString("[Unit]\nDescription=Mount " + m[0] + " at " + where + "\n")
		if pass := field(5); pass != "" && pass != "0" {
			fsck := "systemd-fsck@" + unit.UnitNamePathEscape(what) + ".service"
			c.WriteString("Requires=" + fsck + "\nAfter=" + fsck + "\n")
		}
		c.WriteString("\n[Mount]\nWhat=" + what + "\nWhere=" + where + "\n")
		if t := field(2); t != "" && t != "auto" {
			c.WriteString("Type=" + t + "\n")
		}
		if o := field(3); o != "" {
			c.WriteString("Options=" + o + "\n")
		}
		c.WriteString("\n[Install]\nWantedBy=local-fs.target\n")
		b.cfg.Systemd.Units = append(b.cfg.Systemd.Units, types.Unit{Name: mountUnit(where), Enabled: ptrTo(true), Contents: ptrTo(c.String())})
	}
}

func mountUnit(where string) string { return unit.UnitNamePathEscape(where) + ".mount" }

// mountSource resolves an fstab source as cloud-init does: a path or
// LABEL=/UUID= stays, a diskSetup filesystem label names its device, and a
// bare name is under /dev.
func mountSource(src string, labels map[string]string) string {
	for _, kind := range []string{"LABEL", "UUID", "PARTLABEL", "PARTUUID"} {
		if v, ok := strings.CutPrefix(src, kind+"="); ok {
			return "/dev/disk/by-" + strings.ToLower(kind) + "/" + v
		}
	}
	if strings.HasPrefix(src, "/") {
		return src
	}
	if dev, ok := labels[src]; ok {
		return dev
	}
	return "/dev/" + src
}

// bootCommands run on every boot, early: after local filesystems, before
// the basic system and the bootstrap unit.
func (b *v3Builder) bootCommands() {
	if len(b.plan.BootCommands) == 0 {
		return
	}
	var s strings.Builder
	s.WriteString("#!/bin/bash\nset -e\n")
	for _, c := range b.plan.BootCommands {
		s.WriteString(provisioning.OwnShell(c) + "\n")
	}
	script := s.String()
	b.cfg.Storage.Files = append(b.cfg.Storage.Files, generated(bootcmdScript, 0o700, script))
	contents := "[Unit]\nDescription=nodeboot boot commands\nDefaultDependencies=no\nAfter=local-fs.target\nBefore=sysinit.target " + bootstrapUnit +
		"\n\n[Service]\nType=oneshot\nExecStart=/bin/bash " + bootcmdScript + "\n\n[Install]\nWantedBy=sysinit.target\n"
	b.cfg.Systemd.Units = append(b.cfg.Systemd.Units, types.Unit{Name: bootcmdUnit, Enabled: ptrTo(true), Contents: &contents})
}

// commands writes the pre, bootstrap and post commands into one script run
// once by a oneshot unit, after the network and every mount of the Plan;
// each command runs in its own "/bin/sh -e -c" (provisioning.OwnShell).
func (b *v3Builder) commands() {
	p := b.plan
	var inactive []string
	for _, u := range p.Users {
		if u.Inactive != nil && *u.Inactive {
			inactive = append(inactive, u.Name)
		}
	}
	if len(p.Commands) == 0 && p.Sentinel == "" && len(inactive) == 0 && len(b.values) == 0 {
		return
	}
	var s strings.Builder
	s.WriteString("#!/bin/bash\nset -e\n")
	s.WriteString(nodeValuesScript(p, b.values))
	for _, name := range inactive {
		// An account that expired in 1970 cannot log in, as cloud-init's
		// inactive means; Ignition has no field for it.
		s.WriteString("usermod --expiredate " + inactiveExpiry + " " + shellQuote(name) + "\n")
	}
	for _, c := range p.CommandsIn(provisioning.PhasePre) {
		s.WriteString(provisioning.OwnShell(c.Script) + "\n")
	}
	// systemd starts an enabled unit at boot, maybe before a pre command
	// installed its binary; the Plan's Unit.Enabled means it runs from
	// here on, so it is started again, past a start limit it may have hit.
	for _, u := range p.Units {
		if u.Enabled != nil && *u.Enabled {
			s.WriteString("systemctl reset-failed " + shellQuote(u.Name) + " 2>/dev/null || :\nsystemctl restart " + shellQuote(u.Name) + "\n")
		}
	}
	for _, c := range p.CommandsIn(provisioning.PhaseBootstrap) {
		s.WriteString(provisioning.OwnShell(c.Script) + "\n")
	}
	if p.Sentinel != "" {
		s.WriteString("mkdir -p " + shellQuote(path.Dir(p.Sentinel)) + " && echo success > " + shellQuote(p.Sentinel) + "\n")
	}
	s.WriteString("mkdir -p " + path.Dir(doneStamp) + " && touch " + doneStamp + "\n")
	for _, c := range p.CommandsIn(provisioning.PhasePost) {
		s.WriteString(provisioning.OwnShell(c.Script) + "\n")
	}
	b.cfg.Storage.Files = append(b.cfg.Storage.Files, generated(bootstrapScript, 0o700, s.String()))
	var after strings.Builder
	for _, m := range p.Mounts {
		if len(m) >= 2 && path.IsAbs(m[1]) {
			after.WriteString(" " + mountUnit(m[1]))
		}
	}
	var unitMeta, serviceMeta string
	if len(b.values) > 0 {
		unitMeta, serviceMeta = metadataWiring()
	}
	contents := "[Unit]\nDescription=nodeboot first-boot commands\n" +
		"# Runs once: the script stamps " + doneStamp + " when the bootstrap succeeded.\n" +
		"ConditionPathExists=!" + doneStamp + "\nWants=network-online.target" + after.String() + "\nAfter=network-online.target" + after.String() +
		"\n" + unitMeta + "\n[Service]\nType=oneshot\nRemainAfterExit=yes\n" + serviceMeta + "ExecStart=/bin/bash " + bootstrapScript + "\n\n[Install]\nWantedBy=multi-user.target\n"
	b.cfg.Systemd.Units = append(b.cfg.Systemd.Units, types.Unit{Name: bootstrapUnit, Enabled: ptrTo(true), Contents: &contents})
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
