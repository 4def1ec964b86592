package addons

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/bootstrap"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestCloudInitAcceptsAddons validates the init node's cloud-config with the
// add-ons against cloud-init's own schema (../shared/tools), inline and, over
// a budget, with the manifests left to the fetch fallback (one tool call).
func TestCloudInitAcceptsAddons(t *testing.T) {
	tool := testenv.Tool(t, "cloudinit-validate")
	inline := renderInit(t, addonsctrl.ExtensionOptions{}, standardAddons()...)
	res := build(t, initInput(t, "cc-init-minimal-v1.33"), addonsctrl.ExtensionOptions{MaxBytes: ec2UserDataLimit, Fetch: fetchOptions(t)}, standardAddons()...)
	require.Len(t, res.Secrets, 1, "uncompressed, the add-ons exceed 16 KiB: the fallback must be taken")
	fetched, err := res.Render()
	require.NoError(t, err)
	dir := t.TempDir()
	var files []string
	for name, data := range map[string][]byte{"inline": inline.Data, "fetched": fetched.Data} {
		file := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(file, data, 0o600))
		files = append(files, file)
	}
	out, err := exec.Command(tool, append([]string{"--strict"}, files...)...).CombinedOutput()
	require.NoError(t, err, string(out))
	t.Logf("%s", out)
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
