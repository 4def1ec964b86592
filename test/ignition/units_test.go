package ignition

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	ign24 "github.com/flatcar/ignition/config/v2_4"
	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/internal/third_party/flatcar/v24tov31"
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// unitsPlan is a k3s-shaped Plan: no bootstrap input, units of every shape.
func unitsPlan() *provisioning.Plan {
	return &provisioning.Plan{
		Files: []provisioning.File{{Path: "/etc/rancher/k3s/config.yaml", Permissions: "0600", Content: "token: {{ .Token }}\n"}},
		Units: []provisioning.Unit{
			{Name: "k3s.service", Enabled: yes(), Contents: "[Unit]\nDescription=k3s\n[Service]\nExecStart=/opt/bin/k3s server\n[Install]\nWantedBy=multi-user.target\n",
				DropIns: []provisioning.DropIn{{Name: "10-env.conf", Contents: "[Service]\nEnvironment=K3S_KUBECONFIG_MODE=0644\n"}}},
			{Name: "containerd.service", DropIns: []provisioning.DropIn{{Name: "20-limits.conf", Contents: "[Service]\nLimitNOFILE=1048576\n"}}},
			{Name: "update-engine.service", Enabled: no(), Contents: "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"},
		},
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "systemctl start k3s"}},
		Sentinel: "/run/k3s/bootstrapped",
	}
}

// TestUnitsApplied renders the Plan's units in every Ignition dialect,
// validates all outputs with upstream ignition-validate (one call per spec;
// legacy after Flatcar's own 2.x-to-3.1 translation) and applies them with
// the real Ignition files stage: unit files, drop-ins and enable/disable
// presets land as the Plan declares them, and the legacy dialect's
// run-once unit names nothing of kubeadm.
func TestUnitsApplied(t *testing.T) {
	validateTool := testenv.Tool(t, "ignition-validate")
	testenv.Tool(t, "ignition-apply")
	testenv.RequireRoot(t)
	p := unitsPlan()
	dir := t.TempDir()
	configs := map[string][]byte{}
	bySpec := map[string][]string{}
	for _, version := range ignition.Versions {
		out, err := (&ignition.Renderer{}).Render(p, provisioning.Options{Version: version})
		require.NoError(t, err, version)
		require.Empty(t, out.Warnings, version)
		data, spec := out.Data, version
		if version == ignition.VersionCABPK {
			cfg24, r, err := ign24.Parse(out.Data)
			require.NoError(t, err, r.String())
			translated, err := v24tov31.Translate(cfg24, map[string]string{})
			require.NoError(t, err, "Flatcar's translation")
			data, err = json.Marshal(translated)
			require.NoError(t, err)
			spec, version = "3.1.0", "legacy"
		}
		f := filepath.Join(dir, version+".ign")
		require.NoError(t, os.WriteFile(f, data, 0o600))
		configs[version] = data
		bySpec[spec] = append(bySpec[spec], f)
	}
	for spec, files := range bySpec {
		out, err := exec.Command(validateTool, append([]string{"--spec", spec}, files...)...).CombinedOutput()
		require.NoError(t, err, "ignition-validate:\n%s", out)
		require.Equal(t, len(files), strings.Count("\n"+string(out), "\nOK "), "ignition-validate:\n%s", out)
	}
	for version, data := range configs {
		t.Run(version, func(t *testing.T) {
			root := apply(t, data)
			for _, u := range p.Units {
				unitFile := filepath.Join(root, provisioning.UnitFile(u.Name))
				if u.Contents != "" {
					got, err := os.ReadFile(unitFile)
					require.NoError(t, err, u.Name)
					require.Equal(t, u.Contents, string(got), u.Name)
				} else {
					require.NoFileExists(t, unitFile, "a drop-in-only unit keeps the image's unit file")
				}
				for _, d := range u.DropIns {
					got, err := os.ReadFile(filepath.Join(root, provisioning.DropInFile(u.Name, d.Name)))
					require.NoError(t, err, d.Name)
					require.Equal(t, d.Contents, string(got))
				}
			}
			presets, err := readPresets(root)
			require.NoError(t, err)
			require.True(t, presets["enable k3s.service"], "%v", presets)
			// Ignition presets "disable" only for a unit systemctl reports
			// enabled in the root (util.DisableUnit); in this root none is.
			require.False(t, presets["enable update-engine.service"], "%v", presets)
			for line := range presets {
				require.NotContains(t, line, "containerd", "a unit left as the image has it gets no preset")
				require.NotContains(t, line, "kubeadm")
			}
			require.NoFileExists(t, filepath.Join(root, "etc/kubeadm.sh"))
		})
	}
}
