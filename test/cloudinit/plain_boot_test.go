package cloudinit_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
)

// TestPlainBoots applies a k3s-shaped Plan in the plain dialect with
// Debian's real cloud-init: the files (one owned by the Plan's user, so
// deferred past users-groups), the user with its sudo rule, the units and
// drop-ins land, and the systemctl steps run before the pre and bootstrap
// commands, then the sentinel and the post command.
func TestPlainBoots(t *testing.T) {
	t.Parallel()
	enabled, disabled := true, false
	p := &provisioning.Plan{
		Files: []provisioning.File{
			{Path: "/etc/rancher/k3s/config.yaml", Owner: "root:root", Permissions: "0600", Content: "token: {{ .Token }}\n"},
			{Path: "/var/lib/rancher/k3s/server/manifests/chart.yaml", Permissions: "0644", Content: "valuesContent: |-\n  image: {{ .Values.image }}\n"},
			{Path: "/home/ops/app.conf", Owner: "ops:ops", Permissions: "0640", Content: "owned by a user the plan creates\n"},
		},
		Users: []provisioning.User{{Name: "ops", Groups: "adm, sudo", Shell: "/bin/bash", Sudo: "ALL=(ALL) NOPASSWD: ALL",
			SSHAuthorizedKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE1k3sTestKeyOnlyForTests ops@example"}}},
		Units: []provisioning.Unit{
			{Name: "k3s.service", Enabled: &enabled, Contents: "[Service]\nExecStart=/usr/local/bin/k3s server\n[Install]\nWantedBy=multi-user.target\n",
				DropIns: []provisioning.DropIn{{Name: "10-env.conf", Contents: "[Service]\nEnvironment=K3S_KUBECONFIG_MODE=0644\n"}}},
			{Name: "containerd.service", DropIns: []provisioning.DropIn{{Name: "20-limits.conf", Contents: "[Service]\nLimitNOFILE=1048576\n"}}},
			{Name: "apt-daily.timer", Enabled: &disabled, DropIns: []provisioning.DropIn{{Name: "off.conf", Contents: "[Timer]\nPersistent=false\n"}}},
		},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePre, Script: "echo {{ pre }} > /tmp/pre"},
			{Phase: provisioning.PhaseBootstrap, Script: "k3s server --cluster-init"},
			{Phase: provisioning.PhasePost, Script: "echo done: ok > /tmp/post"},
		},
		Sentinel: "/run/k3s-bootstrap/success",
	}
	out, err := (&cloudinit.Renderer{}).Render(p, provisioning.Options{Version: cloudinit.VersionPlain})
	require.NoError(t, err)
	root, report, passed := boot(t, out.Data, "STUB_CMDS=k3s systemctl")
	require.True(t, passed, "cloudinit-apply:\n%s", report)
	for _, f := range p.Files {
		got, mode := readIn(t, root, f.Path)
		require.Equal(t, f.Content, got, f.Path)
		require.Equal(t, f.Permissions, "0"+strconv.FormatUint(uint64(mode), 8), f.Path)
	}
	for _, u := range p.Units {
		if u.Contents != "" {
			got, mode := readIn(t, root, provisioning.UnitFile(u.Name))
			require.Equal(t, u.Contents, got)
			require.Equal(t, os.FileMode(0o644), mode)
		}
		for _, d := range u.DropIns {
			got, _ := readIn(t, root, provisioning.DropInFile(u.Name, d.Name))
			require.Equal(t, d.Contents, got)
		}
	}
	require.True(t, hasUser(t, root, "ops"))
	pre, _ := readIn(t, root, "/tmp/pre")
	require.Equal(t, "{{ pre }}\n", pre, "no jinja step touched the command")
	sentinel, _ := readIn(t, root, p.Sentinel)
	require.Equal(t, "success\n", sentinel)
	post, _ := readIn(t, root, "/tmp/post")
	require.Equal(t, "done: ok\n", post)
	require.Equal(t, []string{
		"systemctl daemon-reload",
		"systemctl enable k3s.service",
		"systemctl try-restart containerd.service",
		"systemctl disable --now apt-daily.timer",
		"systemctl restart k3s.service",
		"k3s server --cluster-init",
	}, stubCalls(t, root))
}
