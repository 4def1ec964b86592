// Package cloudinit_test checks rendered cloud-config with cloud-init itself:
// its schema validator on every vector, and a real first boot in a throwaway
// root for the init, control-plane join and worker join roles.
package cloudinit_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/bootstrap/manifest"
	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
)

// render builds and renders the KubeadmConfig in input, optionally with the
// corrections annotation set.
func render(t *testing.T, input []byte, corrections bool) *provisioning.Output {
	t.Helper()
	set, err := manifest.Parse(bytes.NewReader(input))
	require.NoError(t, err)
	in, err := set.Input("")
	require.NoError(t, err)
	if corrections {
		if in.Config.Annotations == nil {
			in.Config.Annotations = map[string]string{}
		}
		in.Config.Annotations[bootstrap.AnnotationCloudInitCorrections] = "true"
	}
	res, err := bootstrap.Build(context.Background(), *in)
	require.NoError(t, err)
	out, err := res.Render()
	require.NoError(t, err)
	return out
}

func renderVector(t *testing.T, dir string, corrections bool) *provisioning.Output {
	t.Helper()
	input, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
	require.NoError(t, err)
	return render(t, input, corrections)
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}
