package cloudinit

import (
	"slices"
	"strconv"

	"github.com/nodeboot/nodeboot/provisioning"
)

// The cloud-config modules after runcmd, in CABPK's order and layout (see
// the rules at the top of emit.go).

func (e *emitter) ntp(n *provisioning.NTP) {
	if n == nil {
		return
	}
	e.buf.add("\nntp:\n  ")
	if n.Enabled != nil {
		e.s("enabled: ", strconv.FormatBool(*n.Enabled), "\n  ")
	}
	if e.corrections && len(n.Servers) == 0 {
		return
	}
	e.buf.add("servers:")
	for i, s := range n.Servers {
		if e.corrections && slices.Contains(n.Servers[:i], s) {
			continue
		}
		e.buf.add("\n    - ")
		e.val(s)
	}
}

func (e *emitter) users(us []provisioning.User) {
	if len(us) == 0 {
		return
	}
	e.buf.add("\nusers:")
	for i := range us {
		u := &us[i]
		e.buf.add("\n  - name: ")
		e.val(u.Name)
		e.opt("\n    passwd: ", u.Passwd)
		e.opt("\n    gecos: ", u.Gecos)
		e.opt("\n    groups: ", u.Groups)
		e.opt("\n    homedir: ", u.HomeDir)
		if u.Inactive != nil {
			switch {
			case !e.corrections:
				e.s("\n    inactive: ", strconv.FormatBool(*u.Inactive))
			case *u.Inactive:
				// cloud-init ignores a boolean inactive; an expiry date in the
				// past is what keeps the account from logging in.
				e.buf.add("\n    expiredate: '" + inactiveExpireDate + "'")
			}
		}
		e.optBool("\n    lock_passwd: ", u.LockPassword)
		e.opt("\n    shell: ", u.Shell)
		e.opt("\n    primary_group: ", u.PrimaryGroup)
		e.opt("\n    sudo: ", u.Sudo)
		if len(u.SSHAuthorizedKeys) > 0 {
			e.buf.add("\n    ssh_authorized_keys:")
			for _, k := range u.SSHAuthorizedKeys {
				e.buf.add("\n      - ")
				e.val(k)
			}
		}
	}
}

// opt writes an optional key; prefix is the key's whole line start,
// "\n    key: ", so the layout's constant text is one write.
func (e *emitter) opt(prefix, v string) {
	if v != "" {
		e.buf.add(prefix)
		e.val(v)
	}
}

// optBool is opt for a boolean.
func (e *emitter) optBool(prefix string, v *bool) {
	if v != nil {
		e.s(prefix, strconv.FormatBool(*v))
	}
}

func (e *emitter) disks(d *provisioning.DiskSetup) {
	if d == nil {
		return
	}
	if !e.corrections || len(d.Partitions) > 0 {
		e.buf.add("\ndisk_setup:")
	}
	for i := range d.Partitions {
		p := &d.Partitions[i]
		e.buf.add("\n  ")
		e.scalar(p.Device, true, false)
		e.buf.add(":")
		e.opt("\n    table_type: ", p.TableType)
		switch {
		case len(p.DiskLayout) > 0:
			e.buf.add("\n    layout:")
			for _, s := range p.DiskLayout {
				pct := strconv.Itoa(int(s.Percentage))
				if s.PartitionType != "" {
					e.s("\n      - [", pct, ", ", partitionTypeCode(s.PartitionType), "]")
				} else {
					e.s("\n      - ", pct)
				}
			}
		case p.Layout != nil:
			e.s("\n    layout: ", strconv.FormatBool(*p.Layout))
		case e.corrections:
			// An unset layout means "do not partition" in CABPK's API.
			e.buf.add("\n    layout: false")
		default:
			e.buf.add("\n    layout: <nil>")
		}
		if p.Overwrite != nil {
			e.s("\n    overwrite: ", strconv.FormatBool(*p.Overwrite))
		}
	}
	if !e.corrections || len(d.Filesystems) > 0 {
		e.buf.add("\nfs_setup:")
	}
	for i := range d.Filesystems {
		f := &d.Filesystems[i]
		sep := "\n  - "
		for _, kv := range [3][2]string{{"label", f.Label}, {"filesystem", f.Filesystem}, {"device", f.Device}} {
			if e.corrections && kv[1] == "" {
				// Empty is null to YAML, which the schema rejects; absent
				// is what an unset field means to cloud-init.
				continue
			}
			e.s(sep, kv[0], ": ")
			e.val(kv[1])
			sep = "\n    "
		}
		if sep == "\n  - " {
			e.buf.add("\n  - {}")
		}
		if f.Partition != "" {
			e.buf.add("\n    partition: ")
			e.scalar(f.Partition, false, true)
		}
		e.optBool("\n    overwrite: ", f.Overwrite)
		e.opt("\n    replace_fs: ", f.ReplaceFS)
		if len(f.ExtraOpts) > 0 {
			e.buf.add("\n    extra_opts:")
			for _, o := range f.ExtraOpts {
				e.buf.add("\n      - ")
				e.val(o)
			}
		}
	}
}

func (e *emitter) mounts(ms []provisioning.Mount) {
	if len(ms) == 0 {
		return
	}
	e.buf.add("\nmounts:")
	for _, m := range ms {
		e.buf.add("\n  - ")
		for _, v := range m {
			e.buf.add("- ")
			e.val(v)
			e.buf.add("\n    ")
		}
	}
}

// partitionTypeCode maps CABPK's partition type names to the MBR type codes
// cloud-init expects and passes any other value through unchanged.
func partitionTypeCode(t string) string {
	switch t {
	case "Linux":
		return "83"
	case "LinuxSwap":
		return "82"
	case "LinuxRAID":
		return "fd"
	case "LVM":
		return "8e"
	case "Fat32":
		return "0c"
	case "NTFS":
		return "07"
	case "LinuxExtended":
		return "85"
	}
	return t
}
