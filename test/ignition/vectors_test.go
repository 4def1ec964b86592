package ignition

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/internal/testenv"
)

// TestIgnitionVectors renders every ign-* vector with the default (legacy)
// dialect and compares bytes with what CABPK v1.14.2 wrote.
func TestIgnitionVectors(t *testing.T) {
	for _, dir := range testenv.Vectors(t, "ign-") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, "bootstrap-data"))
			require.NoError(t, err)
			wantFormat, err := os.ReadFile(filepath.Join(dir, "format"))
			require.NoError(t, err)
			res := build(t, dir)
			require.Empty(t, res.Options.Version, "vectors use the default dialect")
			out, err := res.Render()
			require.NoError(t, err)
			require.Equal(t, string(wantFormat), out.Format)
			if !bytes.Equal(want, out.Data) {
				require.Equal(t, string(want), string(out.Data))
			}
		})
	}
}
