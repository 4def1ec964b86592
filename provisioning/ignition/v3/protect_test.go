package ignitionv3_test

import (
	"errors"
	"strings"
	"testing"

	v35 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// secret stands in for content that must never appear in a message.
const secret = "S3CR3T-KEY-MATERIAL"

// protectedPlan is basePlan with what bootstrap adds for a control plane:
// a generated certificate (no Origin), boot commands and their unit.
func protectedPlan() *provisioning.Plan {
	p := basePlan()
	p.Files = append(p.Files, provisioning.File{Path: "/etc/kubernetes/pki/ca.key", Permissions: "0600", Content: "key"})
	p.BootCommands = []string{"echo boot"}
	return p
}

// TestV3AdditionalConfigCannotTouchBootstrap (issue 11): the user's config
// is merged over the generated one, so it could replace, remove or disable
// the bootstrap; each such entry is an error naming the field and the path
// or unit, never the content.
func TestV3AdditionalConfigCannotTouchBootstrap(t *testing.T) {
	file := func(path string) string {
		return `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"` + path + `","overwrite":true,"contents":{"source":"data:,` + secret + `"}}]}}`
	}
	unit := func(body string) string {
		return `{"ignition":{"version":"3.4.0"},"systemd":{"units":[` + body + `]}}`
	}
	for _, c := range []struct {
		name, config, want string
	}{
		{"replace kubeadm config", file("/etc/kubeadm.yml"), "storage.files[0] (/etc/kubeadm.yml)"},
		{"replace bootstrap script", file("/etc/nodeboot/bootstrap.sh"), "storage.files[0] (/etc/nodeboot/bootstrap.sh)"},
		{"replace boot commands script", file("/etc/nodeboot/bootcmd.sh"), "storage.files[0] (/etc/nodeboot/bootcmd.sh)"},
		{"replace a certificate", file("/etc/kubernetes/pki/ca.key"), "storage.files[0] (/etc/kubernetes/pki/ca.key)"},
		{"fake the sentinel", file("/run/cluster-api/bootstrap-success.complete"), "storage.files[0] (/run/cluster-api/bootstrap-success.complete)"},
		{"fake the run-once stamp", file("/var/lib/nodeboot/bootstrap.done"), "storage.files[0] (/var/lib/nodeboot/bootstrap.done)"},
		{"file where a parent directory must be", file("/etc/kubernetes/pki"), "storage.files[0] (/etc/kubernetes/pki)"},
		{"link over the script directory", `{"ignition":{"version":"3.4.0"},"storage":{"links":[{"path":"/etc/nodeboot","target":"/tmp"}]}}`, "storage.links[0] (/etc/nodeboot)"},
		{"directory at the kubeadm config", `{"ignition":{"version":"3.4.0"},"storage":{"directories":[{"path":"/etc/kubeadm.yml"}]}}`, "storage.directories[0] (/etc/kubeadm.yml)"},
		{"disable the bootstrap unit", unit(`{"name":"nodeboot-bootstrap.service","enabled":false}`), "systemd.units[0] (nodeboot-bootstrap.service)"},
		{"mask the bootstrap unit", unit(`{"name":"nodeboot-bootstrap.service","mask":true}`), "systemd.units[0] (nodeboot-bootstrap.service)"},
		{"drop-in on the bootstrap unit", unit(`{"name":"nodeboot-bootstrap.service","dropins":[{"name":"x.conf","contents":"[Service]\nExecStart=\nExecStart=/bin/echo ` + secret + `\n"}]}`), "systemd.units[0] (nodeboot-bootstrap.service)"},
		{"replace the boot commands unit", unit(`{"name":"nodeboot-bootcmd.service","contents":"[Service]\nExecStart=/bin/true\n"}`), "systemd.units[0] (nodeboot-bootcmd.service)"},
		{"replace the whole config", `{"ignition":{"version":"3.4.0","config":{"replace":{"source":"data:,` + secret + `"}}}}`, "ignition.config.replace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := provisioning.Options{Version: "3.4.0", AdditionalConfig: []byte(c.config)}
			r := &ignition.Renderer{}
			_, err := r.Render(protectedPlan(), opts)
			var ps provisioning.Problems
			require.True(t, errors.As(err, &ps), "%v", err)
			require.Len(t, ps, 1, "%v", ps)
			require.Equal(t, "additionalConfig", ps[0].Path.String())
			require.Contains(t, ps[0].Message, ignition.ErrAdditionalConfig.Error())
			require.Contains(t, ps[0].Message, c.want)
			require.NotContains(t, err.Error(), secret)
			require.Equal(t, err.Error(), r.Check(protectedPlan(), opts).Err().Error(), "Check reports what Render refuses")
		})
	}
}

// TestV3AdditionalConfigMayChangeTheRest: what nodeboot does not generate
// for the bootstrap stays the user's to change, spec.files included (the
// user wrote those too), and the user wins there.
func TestV3AdditionalConfigMayChangeTheRest(t *testing.T) {
	config := `{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"https://example.com/site.ign"}]}},
		"storage":{"files":[{"path":"/etc/app.conf","overwrite":true,"contents":{"source":"data:,mine"}},{"path":"/etc/nodeboot-notes","contents":{"source":"data:,x"}}],
		"directories":[{"path":"/etc/kubernetes"}]},
		"systemd":{"units":[{"name":"kubelet.service","dropins":[{"name":"10-x.conf","contents":"[Service]\nEnvironment=X=1\n"}]}]}}`
	out, err := (&ignition.Renderer{}).Render(protectedPlan(), provisioning.Options{Version: "3.4.0", AdditionalConfig: []byte(config)})
	require.NoError(t, err)
	require.Len(t, out.Warnings, 1, "a merged remote config cannot be checked: %v", out.Warnings)
	require.True(t, strings.HasPrefix(out.Warnings[0].Message, "ignition.config.merge"), out.Warnings[0].Message)
	cfg, _, err := v35.ParseCompatibleVersion(out.Data)
	require.NoError(t, err)
	for _, f := range cfg.Storage.Files {
		if f.Path == "/etc/app.conf" {
			require.Equal(t, "data:,mine", *f.Contents.Source)
		}
	}
}
