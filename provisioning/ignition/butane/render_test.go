package butane_test

import (
	"errors"
	"testing"

	v35 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/vcontext/report"
	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/butane"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
)

const secret = "S3CR3T-KEY-MATERIAL"

func plan() *provisioning.Plan {
	return &provisioning.Plan{
		Role:     provisioning.RoleJoinWorker,
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
		Files: []provisioning.File{
			{Path: "/etc/app.conf", Permissions: "0644", Content: "app\n", Origin: provisioning.NewPath("spec", "files").Index(0).WithFields()},
			{Path: "/etc/kubeadm.yml", Permissions: "0600", Content: "---\nkind: JoinConfiguration\n", BootstrapInput: true},
		},
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join --config /etc/kubeadm.yml"}},
	}
}

// TestButaneAdditionalConfig renders Butane additional config through
// ignition with this package linked: each accepted variant is translated and
// merged, Butane's warnings are warnings (errors when strict), and what
// ignition refuses before translation stays refused.
func TestButaneAdditionalConfig(t *testing.T) {
	const unusedKey = "variant: flatcar\nversion: 1.0.0\nstorage:\n  files:\n  - path: /etc/x\n    contents:\n      inline: x\n    bogus: 1\n"
	for _, c := range []struct {
		name, config, version string
		strict                bool
		wantErr, wantWarnings bool
		wantFile              string
	}{
		{name: "flatcar", config: "variant: flatcar\nversion: 1.0.0\nstorage:\n  files:\n  - path: /etc/b\n    contents:\n      inline: b\n", version: "3.3.0", wantFile: "/etc/b"},
		{name: "fcos", config: "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n  - path: /etc/f\n    contents:\n      inline: f\n", version: "3.4.0", wantFile: "/etc/f"},
		{name: "warning", config: unusedKey, version: "3.4.0", wantWarnings: true, wantFile: "/etc/x"},
		{name: "warning strict", config: unusedKey, version: "3.4.0", strict: true, wantErr: true},
		{name: "unsupported variant", config: "variant: openshift\nversion: 4.14.0\n", version: "3.4.0", wantErr: true},
		{name: "experimental", config: "variant: flatcar\nversion: 1.2.0-experimental\n", version: "3.5.0", wantErr: true},
		{name: "unknown version", config: "variant: flatcar\nversion: 9.0.0\n", version: "3.5.0", wantErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := provisioning.Options{Version: c.version, AdditionalConfig: []byte(c.config), Strict: c.strict}
			out, err := (&ignition.Renderer{}).Render(plan(), opts)
			if c.wantErr {
				var ps provisioning.Problems
				require.True(t, errors.As(err, &ps), "%v", err)
				require.Equal(t, "additionalConfig", ps[0].Path.String())
				require.ErrorIs(t, err, ignition.ErrAdditionalConfig)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.wantWarnings, len(out.Warnings) > 0, "%v", out.Warnings)
			cfg, _, err := v35.ParseCompatibleVersion(out.Data)
			require.NoError(t, err)
			var paths []string
			for _, f := range cfg.Storage.Files {
				paths = append(paths, f.Path)
			}
			require.Contains(t, paths, c.wantFile)
			require.Contains(t, paths, "/etc/app.conf")
		})
	}
}

// TestButaneCannotTouchBootstrap: Butane is held to the same rule as
// Ignition JSON once translated (issue 11), and the error names the entry,
// never the content.
func TestButaneCannotTouchBootstrap(t *testing.T) {
	config := "variant: flatcar\nversion: 1.1.0\nstorage:\n  files:\n  - path: /etc/kubeadm.yml\n    overwrite: true\n    contents:\n      inline: " + secret + "\n"
	opts := provisioning.Options{Version: "3.4.0", AdditionalConfig: []byte(config)}
	r := &ignition.Renderer{}
	_, err := r.Render(plan(), opts)
	var ps provisioning.Problems
	require.True(t, errors.As(err, &ps), "%v", err)
	require.Len(t, ps, 1, "%v", ps)
	require.Equal(t, "additionalConfig", ps[0].Path.String())
	require.Contains(t, ps[0].Message, ignition.ErrAdditionalConfig.Error())
	require.Contains(t, ps[0].Message, "storage.files[0] (/etc/kubeadm.yml)")
	require.NotContains(t, err.Error(), secret)
	require.Equal(t, err.Error(), r.Check(plan(), opts).Err().Error(), "Check reports what Render refuses")
}

// TestRegisteredOnce: importing the package registered its translator; a
// second registration is a programming error.
func TestRegisteredOnce(t *testing.T) {
	_, err := (&ignition.Renderer{}).Render(plan(), provisioning.Options{AdditionalConfig: []byte("variant: flatcar\nversion: 1.1.0\n")})
	require.NoError(t, err)
	require.False(t, errors.Is(err, ignition.ErrButaneNotLinked))
	require.PanicsWithValue(t, "ignition: Butane translator registered twice", func() {
		ignition.RegisterButane(func([]byte) ([]byte, report.Report, error) { return nil, report.Report{}, nil })
	})
}
