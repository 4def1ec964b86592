// Package plantest holds sample Plans for tests of provisioners: a whole
// provider's Plan written as a k3s provider would (K3s) and a table with one
// feature family each (Plans). nodeboot checks its plain cloud-config dialect
// on them in two places: the library's own tests (byte-level, benchmarks) and
// the repository's test/cloudinit, which runs cloud-init's real schema and
// loader over the same Plans. A provider may render them with its own
// provisioner. It imports only the Plan and the standard library, and a
// program that does not import it links none of it.
package plantest

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"

	"github.com/nodeboot/nodeboot/provisioning"
)

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func gz(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.String()
}

// K3s is what a k3s provider would build: no kubeadm, no bootstrap
// input, a HelmChart manifest full of {{ }}, a sudo rule with ": ".
func K3s() *provisioning.Plan {
	return &provisioning.Plan{
		Role: provisioning.RoleInit,
		Files: []provisioning.File{
			{Path: "/etc/rancher/k3s/config.yaml", Owner: "root:root", Permissions: "0600", Content: "token: {{ .Token }}\nwrite-kubeconfig-mode: \"0644\"\n"},
			{Path: "/var/lib/rancher/k3s/server/manifests/chart.yaml", Permissions: "0644",
				Content: "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nspec:\n  valuesContent: |-\n    image: {{ .Values.image }}\n    {% raw %}x{% endraw %}\n"},
			{Path: "/home/ops/.config/app", Owner: "ops:ops", Permissions: "0640", Content: "owned by a user the plan creates\n"},
		},
		Users: []provisioning.User{{
			Name: "ops", Gecos: "Ops: on-call #2", Groups: "adm, sudo", Shell: "/bin/bash", Sudo: "ALL=(ALL) NOPASSWD: ALL",
			SSHAuthorizedKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE1k3sTestKeyOnlyForTests ops@example"},
		}},
		Units: []provisioning.Unit{
			{Name: "k3s.service", Enabled: yes(), Contents: "[Unit]\nDescription=k3s\n[Service]\nExecStart=/usr/local/bin/k3s server\n[Install]\nWantedBy=multi-user.target\n",
				DropIns: []provisioning.DropIn{{Name: "10-env.conf", Contents: "[Service]\nEnvironment=K3S_KUBECONFIG_MODE=0644\n"}}},
			{Name: "containerd.service", DropIns: []provisioning.DropIn{{Name: "20-limits.conf", Contents: "[Service]\nLimitNOFILE=1048576\n"}}},
			{Name: "apt-daily.timer", Enabled: no(), DropIns: []provisioning.DropIn{{Name: "off.conf", Contents: "[Timer]\nPersistent=false\n"}}},
		},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePre, Script: "echo {{ not jinja }} > /tmp/pre"},
			{Phase: provisioning.PhaseBootstrap, Script: "k3s server --cluster-init"},
			{Phase: provisioning.PhasePost, Script: "echo done: ok > /tmp/post"},
		},
		Sentinel: "/run/k3s-bootstrap/success",
	}
}

// Plans are the table nodeboot's plain cloud-config dialect is checked on,
// one feature family each, keyed by family; "k3s" is K3s. Each call builds
// them anew, so a test may change what it gets.
func Plans() map[string]*provisioning.Plan {
	plans := map[string]*provisioning.Plan{"k3s": K3s()}
	plans["files"] = &provisioning.Plan{Files: []provisioning.File{
		{Path: "/etc/plain", Content: "{{ x }} {% if %} {# c #}\n: - ? * & ! | > ' \" % @ `\n"},
		{Path: "/etc/b64", Permissions: "0644", Encoding: provisioning.EncodingBase64, Content: base64.StdEncoding.EncodeToString([]byte("base64\n"))},
		{Path: "/etc/gz", Permissions: "0644", Encoding: provisioning.EncodingGzip, Content: gz("raw gzip\n")},
		{Path: "/etc/gzb64", Permissions: "0644", Encoding: provisioning.EncodingGzipBase64, Content: base64.StdEncoding.EncodeToString([]byte(gz("gzip+base64\n")))},
		{Path: "/etc/latin1", Permissions: "0644", Content: "caf\xe9\n"},
		{Path: "/etc/control", Permissions: "0644", Content: "tab\there\r\nbell\a\x00nul\u2028sep\n"},
		{Path: "/etc/plain", Append: yes(), Content: "appended\n"},
		{Path: "/etc/no-newline", Permissions: "644", Content: "  leading blanks, no newline"},
		{Path: "/etc/empty", Content: ""},
	}}
	plans["users"] = &provisioning.Plan{Users: []provisioning.User{
		{Name: "ops", Sudo: "ALL=(ALL) NOPASSWD: ALL", Groups: "adm,sudo", PrimaryGroup: "ops", HomeDir: "/home/ops",
			Passwd: "$6$rounds=4096$salt$hash", LockPassword: no(), SSHAuthorizedKeys: []string{"ssh-rsa AAAA key #1", "ssh-ed25519 AAAA key: two"}},
		{Name: "on", Gecos: "yes", Shell: "/bin/sh", Inactive: yes(), LockPassword: yes()},
		{Name: "0640", Gecos: "1:20", Shell: "2001-12-14", Sudo: "ALL=(ALL:ALL) ALL"},
	}}
	plans["boot-commands"] = &provisioning.Plan{BootCommands: []string{"echo {{ early }}", "mkdir -p /run/x: y", "- not a list", "true # comment"}}
	plans["commands"] = &provisioning.Plan{
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePost, Script: "echo post"},
			{Phase: provisioning.PhasePre, Script: "echo 'pre'\necho second line"},
			{Phase: provisioning.PhaseBootstrap, Script: "rke2 server"},
		},
		Sentinel: "/run/rke2/bootstrapped",
	}
	plans["ntp"] = &provisioning.Plan{NTP: &provisioning.NTP{Enabled: yes(), Servers: []string{"0.pool.ntp.org", "time.example.com"}}}
	plans["mounts"] = &provisioning.Plan{Mounts: []provisioning.Mount{{"/dev/vdb", "/var/lib/rancher", "ext4", "defaults,nofail", "0", "2"}, {"LABEL=data", "/data"}}}
	plans["disks"] = &provisioning.Plan{Disks: &provisioning.DiskSetup{
		Partitions: []provisioning.Partition{
			{Device: "/dev/vdb", Layout: yes(), TableType: "gpt", Overwrite: no()},
			{Device: "/dev/vdc", TableType: "mbr", DiskLayout: []provisioning.PartitionSpec{{Percentage: 50, PartitionType: "Linux"}, {Percentage: 20, PartitionType: "LinuxSwap"}, {Percentage: 30}}},
			{Device: "/dev/vdd"},
		},
		Filesystems: []provisioning.Filesystem{
			{Device: "/dev/vdb", Filesystem: "ext4", Label: "data", Partition: "none", Overwrite: no(), ExtraOpts: []string{"-E", "lazy_itable_init=1"}},
			{Device: "/dev/vdc", Filesystem: "xfs", Label: "logs", Partition: "auto", ReplaceFS: "ntfs"},
		},
	}}
	plans["units-only"] = &provisioning.Plan{Units: []provisioning.Unit{{Name: `dev-disk-by\x2dlabel-swap.swap`, Contents: "[Swap]\nWhat=/dev/disk/by-label/swap\n", Enabled: yes()}}}
	plans["empty"] = &provisioning.Plan{}
	return plans
}
