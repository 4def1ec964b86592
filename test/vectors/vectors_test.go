// Package vectors checks nodeboot against the reference bootstrap data that
// Cluster API v1.14.2's kubeadm bootstrap provider produced (../shared/cabpk-vectors).
package vectors

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/nodeboot/nodeboot/cloudinit"
	"github.com/nodeboot/nodeboot/internal/testenv"
)

func TestCloudConfigVectors(t *testing.T) {
	for _, dir := range testenv.Vectors(t, "cc-") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, "bootstrap-data"))
			require.NoError(t, err)
			wantFormat, err := os.ReadFile(filepath.Join(dir, "format"))
			require.NoError(t, err)
			out, err := testenv.BuildVector(t, dir).Render()
			require.NoError(t, err)
			require.Equal(t, string(wantFormat), out.Format)
			if !bytes.Equal(want, out.Data) {
				require.Equal(t, string(want), string(out.Data))
			}
		})
	}
}
