// Package testplan holds the Plans the ignition packages' tests share: the
// smallest Plan both dialects render, and a generated corpus of Plans drawn
// from ordinary and hostile values that keeps Ignition's own machinery the
// oracle for what the dialects generate. Only tests import it.
package testplan

import (
	"fmt"
	"math/rand/v2"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Base is the smallest Plan both dialects render: what bootstrap builds
// for an Ignition join, without the kubeadm specifics.
func Base() *provisioning.Plan {
	return &provisioning.Plan{
		Role:     provisioning.RoleJoinWorker,
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
		Files: []provisioning.File{
			{Path: "/etc/app.conf", Permissions: "0644", Content: "app\n", Origin: provisioning.NewPath("spec", "files").Index(0).WithFields()},
			{Path: "/etc/kubeadm.yml", Permissions: "0600", Content: "---\nkind: JoinConfiguration\n", BootstrapInput: true},
		},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePre, Script: "echo pre", Origin: provisioning.NewPath("spec", "preKubeadmCommands").Index(0).WithFields()},
			{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join --config /etc/kubeadm.yml "},
			{Phase: provisioning.PhasePost, Script: "echo post", Origin: provisioning.NewPath("spec", "postKubeadmCommands").Index(0).WithFields()},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// CorpusSize Plans are drawn per test; the vectors are covered in
// test/ignition.
const CorpusSize = 400

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// Corpus draws a Plan from ordinary and hostile values.
func Corpus(r *rand.Rand) *provisioning.Plan {
	p := &provisioning.Plan{
		Role:     pick(r, provisioning.RoleInit, provisioning.RoleJoinControlPlane, provisioning.RoleJoinWorker),
		Sentinel: pick(r, "/run/cluster-api/bootstrap-success.complete", ""),
	}
	paths := []string{"/etc/app.conf", "/etc/motd", "/opt/bin/x", "/etc/a//b", "/etc/x/", "relative", "/etc/systemd/system/var-lib-etcd.mount",
		"/etc/nodeboot/bootstrap.sh", "/etc/sudoers.d/ops", "/etc/ntp.conf", "/var/lib/etcd/x"}
	contents := []string{"x\n", "", "a: b #c\n", "  indented\n", "line\r\nbreak", "tab\there", "ünï\u2028code", "{{ .x }}", "#!/bin/sh\necho hi\n", "\x00bin", "aGVsbG8K"}
	for i, n := 0, r.IntN(6); i < n; i++ {
		f := provisioning.File{
			Path: pick(r, paths...), Content: pick(r, contents...), Origin: provisioning.NewPath("spec", "files").Index(i).WithFields(),
			Permissions: pick(r, "0644", "0600", "0755", "644", "07777", "017777", "0", ""),
			Owner:       pick(r, "", "root:root", "core", "1000:1000", "0:wheel", ":g", "a b:c"),
			Encoding:    pick(r, provisioning.EncodingNone, provisioning.EncodingNone, provisioning.EncodingBase64),
			Append:      pick(r, nil, ptr(true), ptr(false)),
		}
		if f.Encoding == provisioning.EncodingBase64 {
			f.Content = pick(r, "aGVsbG8K", "", "!!notbase64")
		}
		p.Files = append(p.Files, f)
	}
	p.Files = append(p.Files, provisioning.File{Path: pick(r, "/etc/kubeadm.yml", "/run/kubeadm/kubeadm.yaml"), Permissions: "0600", Content: "---\nkind: JoinConfiguration\n", BootstrapInput: true})
	for i, n := 0, r.IntN(3); i < n; i++ {
		p.Users = append(p.Users, provisioning.User{
			Name: pick(r, "ops", "core", "capi", "ops"), Gecos: pick(r, "", "Ops: on-call #2", "Admin"),
			Groups: pick(r, "", "wheel", "wheel, docker", "a, a"), Shell: pick(r, "", "/bin/bash"), HomeDir: pick(r, "", "/home/x"),
			Passwd: pick(r, "", "$6$x"), LockPassword: pick(r, nil, ptr(false), ptr(true)), PrimaryGroup: pick(r, "", "ops"),
			Sudo:              pick(r, "", "ALL=(ALL) NOPASSWD:ALL"),
			SSHAuthorizedKeys: pick(r, nil, []string{"ssh-ed25519 AAAA a"}, []string{"k", "k"}),
			Inactive:          pick(r, nil, ptr(false), ptr(true)),
			Origin:            provisioning.NewPath("spec", "users").Index(i),
		})
	}
	if r.IntN(3) == 0 {
		p.NTP = &provisioning.NTP{Enabled: pick(r, nil, ptr(true), ptr(false)), Servers: pick(r, nil, []string{"time1.example.com"}, []string{"a", "b"})}
	}
	if r.IntN(3) == 0 {
		d := &provisioning.DiskSetup{}
		for i, n := 0, r.IntN(3); i < n; i++ {
			d.Partitions = append(d.Partitions, provisioning.Partition{Device: pick(r, "/dev/sdb", "/dev/sdc", "sdb", "/dev/nvme0n1"),
				Layout: pick(r, nil, ptr(true), ptr(false)), Overwrite: pick(r, nil, ptr(true), ptr(false)), TableType: pick(r, "", "gpt")})
		}
		for i, n := 0, r.IntN(3); i < n; i++ {
			d.Filesystems = append(d.Filesystems, provisioning.Filesystem{Device: pick(r, "/dev/sdb1", "/dev/sdc", "sdd", "/dev/sdb1"),
				Filesystem: pick(r, "ext4", "xfs", "vfat", "btrfs", "swap", "zfs"), Label: pick(r, "etcd_disk", "data", "a_label_that_is_too_long_for_xfs", ""),
				Overwrite: pick(r, nil, ptr(true), ptr(false)), ExtraOpts: pick(r, nil, []string{"-E", "lazy_itable_init=1"})})
		}
		p.Disks = d
	}
	for i, n := 0, r.IntN(3); i < n; i++ {
		p.Mounts = append(p.Mounts, pick(r, provisioning.Mount{"etcd_disk", "/var/lib/etcd"}, provisioning.Mount{"data", "/var/lib/data", "defaults", "nofail"},
			provisioning.Mount{"LABEL=x", "/mnt/x", "ext4", "defaults", "0", "2"}, provisioning.Mount{"swap", "none", "swap"}))
	}
	if r.IntN(4) == 0 {
		p.BootCommands = []string{"echo boot"}
	}
	if r.IntN(10) < 6 {
		ordinary(p)
	}
	p.Commands = append(p.Commands, provisioning.Command{Phase: provisioning.PhasePre, Script: pick(r, "echo pre", "a: b", "multi\nline"), Origin: provisioning.NewPath("spec", "preKubeadmCommands").Index(0).WithFields()})
	p.Commands = append(p.Commands, provisioning.Command{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join --config /etc/kubeadm.yml"})
	return p
}

// ordinary turns the values that collide or break a config into ordinary
// ones, so that the corpus holds enough valid configs to compare bytes.
func ordinary(p *provisioning.Plan) {
	for i := range p.Files {
		if f := &p.Files[i]; !f.BootstrapInput {
			f.Path, f.Permissions = fmt.Sprintf("/etc/app/%d.conf", i), "0644"
		}
	}
	for i := range p.Users {
		u := &p.Users[i]
		u.Name, u.Groups, u.SSHAuthorizedKeys = fmt.Sprintf("user%d", i), "wheel", []string{"ssh-ed25519 AAAA a"}
	}
	if d := p.Disks; d != nil {
		for i := range d.Partitions {
			d.Partitions[i].Device = fmt.Sprintf("/dev/vd%c", 'b'+i)
		}
		for i := range d.Filesystems {
			d.Filesystems[i].Device, d.Filesystems[i].Filesystem, d.Filesystems[i].Label = fmt.Sprintf("/dev/vd%c1", 'b'+i), "ext4", fmt.Sprintf("fs%d", i)
		}
	}
	p.Mounts = nil
}
