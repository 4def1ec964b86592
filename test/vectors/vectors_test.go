// Package vectors checks nodeboot against the reference bootstrap data that
// Cluster API v1.14.2's kubeadm bootstrap provider produced (../shared/cabpk-vectors).
package vectors

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestVectors renders every vector — cloud-config and CABPK's Ignition 2.3
// alike, with no nodeboot annotation — and compares bytes with CABPK's.
func TestVectors(t *testing.T) {
	dirs := append(testenv.Vectors(t, "cc-"), testenv.Vectors(t, "ign-")...)
	require.GreaterOrEqual(t, len(dirs), 20, "all 20 reference vectors")
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, "bootstrap-data"))
			require.NoError(t, err)
			wantFormat, err := os.ReadFile(filepath.Join(dir, "format"))
			require.NoError(t, err)
			res := testenv.BuildVector(t, dir)
			require.Equal(t, provisioning.VersionCABPK, res.Options.Version, "vectors use CABPK's dialect")
			out, err := res.Render()
			require.NoError(t, err)
			require.Equal(t, string(wantFormat), out.Format)
			if !bytes.Equal(want, out.Data) {
				require.Equal(t, string(want), string(out.Data))
			}
		})
	}
}
