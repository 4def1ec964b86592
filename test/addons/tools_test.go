package addons

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/bootstrap"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/internal/testenv"
)

// TestCloudInitAcceptsAddons validates the init node's cloud-config with the
// add-ons against cloud-init's own schema (../shared/tools).
func TestCloudInitAcceptsAddons(t *testing.T) {
	tool := testenv.Tool(t, "cloudinit-validate")
	out := renderInit(t, addonsctrl.ExtensionOptions{}, standardAddons()...)
	file := filepath.Join(t.TempDir(), "user-data")
	require.NoError(t, os.WriteFile(file, out.Data, 0o600))
	res, err := exec.Command(tool, "--strict", file).CombinedOutput()
	require.NoError(t, err, string(res))
	t.Logf("%s", res)
}

// TestIgnitionAcceptsAddons validates the gzip-wrapped Ignition v3 config of
// an init node with the add-ons with upstream ignition-validate.
func TestIgnitionAcceptsAddons(t *testing.T) {
	tool := testenv.Tool(t, "ignition-validate")
	in := initInput(t, "ign-init-minimal-v1.33")
	in.Config.Annotations = map[string]string{bootstrap.AnnotationIgnitionVersion: "3.4.0"}
	out, err := build(t, in, addonsctrl.ExtensionOptions{Compress: true, MaxBytes: ec2UserDataLimit}, standardAddons()...).Render()
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "config.ign")
	require.NoError(t, os.WriteFile(file, out.Data, 0o600))
	res, err := exec.Command(tool, "--spec", "3.4.0", file).CombinedOutput()
	require.NoError(t, err, string(res))
	t.Logf("%s", res)
}
