package ignition_test

import (
	"strings"
	"testing"

	v35 "github.com/coreos/ignition/v2/config/v3_5"
	v35types "github.com/coreos/ignition/v2/config/v3_5/types"
	ign23 "github.com/flatcar/ignition/config/v2_3"
	ign23types "github.com/flatcar/ignition/config/v2_3/types"
	"github.com/stretchr/testify/require"
	"github.com/vincent-petithory/dataurl"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// planUnits are units of every shape: new and enabled with a drop-in, an
// image unit amended by a drop-in only, one disabled.
func planUnits() []provisioning.Unit {
	return []provisioning.Unit{
		{Name: "node-agent.service", Enabled: ptr(true), Contents: "[Unit]\nDescription=agent\n[Service]\nExecStart=/usr/bin/agent\n[Install]\nWantedBy=multi-user.target\n",
			DropIns: []provisioning.DropIn{{Name: "10-env.conf", Contents: "[Service]\nEnvironment=A=1\n"}}},
		{Name: "containerd.service", DropIns: []provisioning.DropIn{{Name: "20-limits.conf", Contents: "[Service]\nLimitNOFILE=1048576\n"}}},
		{Name: "update-engine.service", Enabled: ptr(false), Contents: "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"},
	}
}

// TestV3Units: the Plan's units are native Ignition units, read back by
// Ignition's own parser (which validates them) as the Plan declares them.
func TestV3Units(t *testing.T) {
	p := basePlan()
	p.Units = planUnits()
	for _, version := range ignition.Versions[1:] {
		t.Run(version, func(t *testing.T) {
			out := render(t, p, provisioning.Options{Version: version})
			require.Empty(t, out.Warnings)
			cfg, rep, err := v35.ParseCompatibleVersion(out.Data)
			require.NoError(t, err, rep.String())
			require.Empty(t, rep.Entries, rep.String())
			got := map[string]v35types.Unit{}
			for _, u := range cfg.Systemd.Units {
				got[u.Name] = u
			}
			for _, want := range p.Units {
				u, ok := got[want.Name]
				require.True(t, ok, "unit %s missing", want.Name)
				require.Equal(t, want.Enabled, u.Enabled, want.Name)
				if want.Contents == "" {
					require.Nil(t, u.Contents, want.Name)
				} else {
					require.Equal(t, want.Contents, *u.Contents, want.Name)
				}
				require.Len(t, u.Dropins, len(want.DropIns), want.Name)
				for i, d := range want.DropIns {
					require.Equal(t, d.Name, u.Dropins[i].Name)
					require.Equal(t, d.Contents, *u.Dropins[i].Contents)
				}
			}
			require.Contains(t, got, "nodeboot-bootstrap.service", "the generated units stay")
		})
	}
}

// TestUnitNamedLikeAGeneratedUnit: a Plan unit may not take the name of a
// unit a dialect generates; the error names the Plan's unit.
func TestUnitNamedLikeAGeneratedUnit(t *testing.T) {
	for _, tc := range []struct {
		name, version, unit string
		mutate              func(*provisioning.Plan)
	}{
		{"v3 bootstrap unit", "3.4.0", "nodeboot-bootstrap.service", func(*provisioning.Plan) {}},
		{"v3 mount unit", "3.4.0", "var-lib-data.mount", func(p *provisioning.Plan) { p.Mounts = []provisioning.Mount{{"/dev/vdb", "/var/lib/data"}} }},
		{"legacy kubeadm unit", provisioning.VersionCABPK, "kubeadm.service", func(*provisioning.Plan) {}},
		{"legacy ntpd", provisioning.VersionCABPK, "ntpd.service", func(p *provisioning.Plan) { p.NTP = &provisioning.NTP{Enabled: ptr(true)} }},
		{"legacy generic unit", provisioning.VersionCABPK, "nodeboot-bootstrap.service", func(p *provisioning.Plan) { p.Files = p.Files[:1] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := basePlan()
			tc.mutate(p)
			p.Units = []provisioning.Unit{{Name: tc.unit, Contents: "[Service]\nExecStart=/bin/true\n"}}
			_, err := (&ignition.Renderer{}).Render(p, provisioning.Options{Version: tc.version})
			require.ErrorIs(t, err, provisioning.ErrInvalid)
			var ps provisioning.Problems
			require.ErrorAs(t, err, &ps)
			require.Len(t, ps.Errors(), 1, "%v", err)
			require.Equal(t, "units[0].name", ps.Errors()[0].Path.String())
		})
	}
}

func legacyConfig(t *testing.T, data []byte) ign23types.Config {
	t.Helper()
	// CABPK's output carries ignition.security.tls, which the 2.3 parser
	// warns about; anything else would be a finding of ours.
	cfg, rep, err := ign23.Parse(data)
	require.NoError(t, err, rep.String())
	for _, e := range rep.Entries {
		require.Contains(t, e.Message, "unrecognized key: tls", rep.String())
	}
	return cfg
}

func legacyFile(t *testing.T, cfg ign23types.Config, path string) (string, bool) {
	t.Helper()
	for _, f := range cfg.Storage.Files {
		if f.Path == path {
			d, err := dataurl.DecodeString(f.Contents.Source)
			require.NoError(t, err)
			return string(d.Data), true
		}
	}
	return "", false
}

// TestLegacyUnits: legacy Ignition carries the Plan's units in CLC
// systemd.units after the generated ones, and Ignition 2.3's parser reads
// them as the Plan declares them.
func TestLegacyUnits(t *testing.T) {
	p := basePlan()
	p.Units = planUnits()
	out := render(t, p, provisioning.Options{Version: provisioning.VersionCABPK})
	require.Empty(t, out.Warnings)
	cfg := legacyConfig(t, out.Data)
	var names []string
	for _, u := range cfg.Systemd.Units {
		names = append(names, u.Name)
	}
	require.Equal(t, []string{"kubeadm.service", "node-agent.service", "containerd.service", "update-engine.service"}, names)
	for i, want := range p.Units {
		u := cfg.Systemd.Units[i+1]
		require.Equal(t, want.Enabled, u.Enabled, want.Name)
		require.Equal(t, want.Contents, u.Contents, want.Name)
		require.Len(t, u.Dropins, len(want.DropIns))
		for j, d := range want.DropIns {
			require.Equal(t, d.Name, u.Dropins[j].Name)
			require.Equal(t, d.Contents, u.Dropins[j].Contents)
		}
	}

	// What a literal block cannot carry is an error naming the field.
	p.Units[0].DropIns[0].Contents = "[Service]\r\nEnvironment=A=1\r\n"
	_, err := (&ignition.Renderer{}).Render(p, provisioning.Options{Version: provisioning.VersionCABPK})
	var ps provisioning.Problems
	require.ErrorAs(t, err, &ps)
	require.Equal(t, "units[0].dropIns[0].contents", ps.Errors()[0].Path.String(), "%v", err)
}

// TestLegacyWithoutBootstrapInput: a Plan without a bootstrap input (not
// kubeadm's) gets a run-once unit and script that name nothing of kubeadm
// and stamp a file instead of moving /etc/kubeadm.yml away; without
// commands or a sentinel there is neither. A Plan with an input keeps
// CABPK's layout and its requirements.
func TestLegacyWithoutBootstrapInput(t *testing.T) {
	p := basePlan()
	p.Files = p.Files[:1]
	p.Commands[1].Script = "k3s agent"
	cfg := legacyConfig(t, render(t, p, provisioning.Options{Version: provisioning.VersionCABPK}).Data)
	require.Len(t, cfg.Systemd.Units, 1)
	unit := cfg.Systemd.Units[0]
	require.Equal(t, "nodeboot-bootstrap.service", unit.Name)
	require.True(t, *unit.Enabled)
	require.Contains(t, unit.Contents, "ConditionPathExists=!/var/lib/nodeboot/bootstrap.done\n")
	require.Contains(t, unit.Contents, "ExecStart=/bin/bash /etc/nodeboot/bootstrap.sh\n")
	script, ok := legacyFile(t, cfg, "/etc/nodeboot/bootstrap.sh")
	require.True(t, ok)
	require.Equal(t, "#!/bin/bash\nset -e\n\necho pre\n\nk3s agent\n"+
		"mkdir -p /run/cluster-api && echo success > /run/cluster-api/bootstrap-success.complete\n"+
		"mkdir -p /var/lib/nodeboot && touch /var/lib/nodeboot/bootstrap.done\n\necho post\n", script)
	for _, f := range cfg.Storage.Files {
		require.NotContains(t, f.Path, "kubeadm")
	}
	require.NotContains(t, string(render(t, p, provisioning.Options{Version: provisioning.VersionCABPK}).Data), "kubeadm")

	// Nothing to run: no unit, no script.
	p.Commands, p.Sentinel = nil, ""
	cfg = legacyConfig(t, render(t, p, provisioning.Options{Version: provisioning.VersionCABPK}).Data)
	require.Empty(t, cfg.Systemd.Units)
	require.Len(t, cfg.Storage.Files, 1)

	// A bootstrap input keeps CABPK's layout and what it needs.
	k := basePlan()
	k.Files[1].Path = "/etc/k3s.yml"
	_, err := (&ignition.Renderer{}).Render(k, provisioning.Options{Version: provisioning.VersionCABPK})
	require.ErrorContains(t, err, "files[1].path: the legacy ignition layout runs the bootstrap only while /etc/kubeadm.yml exists")
	k = basePlan()
	k.Commands = k.Commands[:1]
	_, err = (&ignition.Renderer{}).Render(k, provisioning.Options{Version: provisioning.VersionCABPK})
	require.ErrorContains(t, err, "commands: the legacy ignition layout needs exactly one bootstrap command")
	kubeadm, ok := legacyFile(t, legacyConfig(t, render(t, basePlan(), provisioning.Options{Version: provisioning.VersionCABPK}).Data), "/etc/kubeadm.sh")
	require.True(t, ok)
	require.True(t, strings.Contains(kubeadm, "mv /etc/kubeadm.yml /tmp/\n"))
}
