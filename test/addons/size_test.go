package addons

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/bootstrap"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/internal/testenv"
	"github.com/nodeboot/nodeboot/provisioning"
)

// ec2UserDataLimit is EC2's raw user-data limit.
const ec2UserDataLimit = 16384

// TestSizeBudget: every init control-plane vector with Flannel and NodeLocal
// DNSCache fits 16,384 bytes, gzip-compressed cloud-init and gzip-wrapped
// Ignition v3 alike; the sizes are printed.
func TestSizeBudget(t *testing.T) {
	opts := addonsctrl.ExtensionOptions{Compress: true, MaxBytes: ec2UserDataLimit}
	for _, dir := range testenv.Vectors(t, "") {
		name := filepath.Base(dir)
		if !strings.Contains(name, "-init-") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			dialect := "cloud-config"
			prepare := func() *bootstrap.Input {
				in := initInput(t, name)
				if strings.HasPrefix(name, "ign-") {
					// Ignition v3 (opt-in); CABPK's Ignition 2.3 cannot compress.
					in.Config.Annotations = map[string]string{bootstrap.AnnotationIgnitionVersion: "3.4.0"}
					dialect = "ignition v3.4.0"
					if in.Config.Spec.Ignition.ContainerLinuxConfig.AdditionalConfig != "" {
						// A Container Linux Config only works with the legacy
						// dialect; measure the rest of the vector in v3.
						in.Config.Spec.Ignition.ContainerLinuxConfig.AdditionalConfig = ""
						dialect += " (no CLC)"
					}
				}
				return in
			}
			base, err := build(t, prepare(), addonsctrl.ExtensionOptions{}).Render()
			require.NoError(t, err)
			in := prepare()
			res := build(t, in, opts, standardAddons()...)
			require.True(t, res.Options.Compress)
			out, err := res.Render()
			require.NoError(t, err)
			require.LessOrEqual(t, len(out.Data), ec2UserDataLimit)
			t.Log(fmt.Sprintf("%-30s %-25s without add-ons %6d B; with flannel+nodelocaldns %6d B uncompressed, %6d B compressed (budget %d)",
				name, dialect, len(base.Data), out.Sizes["uncompressed"], len(out.Data), ec2UserDataLimit))
		})
	}
}

// TestOverBudgetIsAnError: over the configured budget the render fails with
// provisioning.ErrTooLarge and yields no data; nothing is truncated.
func TestOverBudgetIsAnError(t *testing.T) {
	t.Run("cloud-config uncompressed over 16 KiB", func(t *testing.T) {
		res := build(t, initInput(t, "cc-init-minimal-v1.33"), addonsctrl.ExtensionOptions{MaxBytes: ec2UserDataLimit}, standardAddons()...)
		require.False(t, res.Options.Compress)
		out, err := res.Render()
		require.ErrorIs(t, err, provisioning.ErrTooLarge)
		require.Nil(t, out)
		require.Contains(t, err.Error(), "budget 16384")
		t.Log(err)
	})
	t.Run("compressed over a tight budget", func(t *testing.T) {
		res := build(t, initInput(t, "cc-init-minimal-v1.33"), addonsctrl.ExtensionOptions{MaxBytes: 4096, Compress: true}, standardAddons()...)
		out, err := res.Render()
		require.ErrorIs(t, err, provisioning.ErrTooLarge)
		require.Nil(t, out)
		t.Log(err)
	})
	t.Run("ignition v3 over a tight budget", func(t *testing.T) {
		in := initInput(t, "ign-init-minimal-v1.33")
		in.Config.Annotations = map[string]string{bootstrap.AnnotationIgnitionVersion: "3.4.0"}
		res := build(t, in, addonsctrl.ExtensionOptions{MaxBytes: 4096, Compress: true}, standardAddons()...)
		out, err := res.Render()
		require.ErrorIs(t, err, provisioning.ErrTooLarge)
		require.Nil(t, out)
		t.Log(err)
	})
	t.Run("legacy ignition is not asked to compress", func(t *testing.T) {
		res := build(t, initInput(t, "ign-init-minimal-v1.33"), addonsctrl.ExtensionOptions{Compress: true}, standardAddons()...)
		require.False(t, res.Options.Compress)
		_, err := res.Render()
		require.NoError(t, err)
	})
}
