package cloudinit_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// unitsPlan is a CABPK-shaped Plan (sentinel, bootstrap command) with units.
func unitsPlan() *provisioning.Plan {
	return &provisioning.Plan{
		Role:  provisioning.RoleJoinWorker,
		Files: []provisioning.File{{Path: "/etc/app.conf", Permissions: "0644", Content: "app\n"}},
		Units: []provisioning.Unit{
			{Name: "node-agent.service", Enabled: new(true), Contents: "[Service]\nExecStart=/usr/bin/node-agent\n[Install]\nWantedBy=multi-user.target\n",
				DropIns: []provisioning.DropIn{{Name: "10-env.conf", Contents: "[Service]\nEnvironment=A=1\n"}}},
			{Name: "kubelet.service", DropIns: []provisioning.DropIn{{Name: "20-extra.conf", Contents: "[Service]\nEnvironment=KUBELET_EXTRA_ARGS=--v=2\n"}}},
		},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePre, Script: "echo pre"},
			{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join --config /run/kubeadm/kubeadm.yaml"},
		},
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
	}
}

// TestCABPKDialectUnits: in CABPK's dialect units become files under
// /etc/systemd/system after the Plan's files, and systemctl steps open
// runcmd; cloud-init's schema accepts the result and cloud-init reads the
// units' contents and the steps as the Plan says.
func TestCABPKDialectUnits(t *testing.T) {
	p := unitsPlan()
	out, err := (&cloudinit.Renderer{}).Render(p, provisioning.Options{Version: provisioning.VersionCABPK})
	require.NoError(t, err)
	require.Empty(t, out.Warnings)
	withoutUnits := unitsPlan()
	withoutUnits.Units = nil
	bare, err := (&cloudinit.Renderer{}).Render(withoutUnits, provisioning.Options{Version: provisioning.VersionCABPK})
	require.NoError(t, err)
	require.NotEqual(t, bare.Data, out.Data)

	f := filepath.Join(t.TempDir(), "units.cloud-config")
	require.NoError(t, os.WriteFile(f, out.Data, 0o600))
	res, log := testenv.CloudInitValidate(t, []string{f})
	require.True(t, res[f], "cloudinit-validate:\n%s", log)

	read := testenv.CloudInitLoad(t, [][]byte{out.Data})[0]
	require.True(t, read.Valid, read.Error)
	doc := jsonValue(t, read.Data).(map[string]any)
	type file struct{ path, content, perms, owner string }
	var files []file
	for _, w := range doc["write_files"].([]any) {
		m := w.(map[string]any)
		owner, _ := m["owner"].(string)
		files = append(files, file{m["path"].(string), m["content"].(string), m["permissions"].(string), owner})
	}
	require.Equal(t, []file{
		{"/etc/app.conf", "app\n", "0644", ""},
		{"/etc/systemd/system/node-agent.service", p.Units[0].Contents, "0644", "root:root"},
		{"/etc/systemd/system/node-agent.service.d/10-env.conf", p.Units[0].DropIns[0].Contents, "0644", "root:root"},
		{"/etc/systemd/system/kubelet.service.d/20-extra.conf", p.Units[1].DropIns[0].Contents, "0644", "root:root"},
		{"/run/cluster-api/placeholder", files[4].content, "0640", "root:root"},
	}, files)
	require.Equal(t, []any{
		"systemctl daemon-reload",
		"systemctl enable node-agent.service",
		"systemctl try-restart kubelet.service",
		"echo pre",
		"systemctl restart node-agent.service",
		"kubeadm join --config /run/kubeadm/kubeadm.yaml && echo success > /run/cluster-api/bootstrap-success.complete",
	}, doc["runcmd"])
}

// TestCABPKDialectUnitProblemsNameTheUnit: a hazard in a unit is reported
// at the unit, and the Plan's commands keep their own paths although the
// systemctl steps come before them.
func TestCABPKDialectUnitProblemsNameTheUnit(t *testing.T) {
	p := unitsPlan()
	p.Units[0].Contents = "[Service]\nExecStart=/bin/echo {{ x }}\n"
	p.Commands[0].Script = "echo {{ y }}"
	ps := (&cloudinit.Renderer{}).Check(p, provisioning.Options{Version: provisioning.VersionCABPK})
	var paths []string
	for _, pr := range ps {
		paths = append(paths, pr.Path.String())
	}
	require.ElementsMatch(t, []string{"units[0].content", "commands[0]"}, paths, "%v", ps)
}

// TestCABPKDialectWarnsOfExitZero: CABPK's runcmd is one shell, so an exit 0
// in a pre command silently skips the bootstrap command and the sentinel;
// the dialect keeps the bytes and warns at the command (README, "One Plan,
// one meaning").
func TestCABPKDialectWarnsOfExitZero(t *testing.T) {
	p := unitsPlan()
	p.Commands[0].Script = "test -f /etc/done && exit 0"
	var paths []string
	for _, pr := range (&cloudinit.Renderer{}).Check(p, provisioning.Options{Version: provisioning.VersionCABPK}).Warnings() {
		paths = append(paths, pr.Path.String())
	}
	require.Contains(t, paths, "commands[0]")
	require.Empty(t, (&cloudinit.Renderer{}).Check(p, provisioning.Options{Version: cloudinit.VersionPlain}).Warnings(), "the plain dialect runs each command in its own shell")
}
