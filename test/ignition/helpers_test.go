// Package ignition tests the Ignition provisioner end to end: CABPK's
// reference vectors, a differential test against CABPK's own renderer, and
// native Ignition v3 applied by the real Ignition engine.
package ignition

import (
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/bootstrap/manifest"
	_ "github.com/nodeboot/nodeboot/ignition"
)

// build reads a vector's input.yaml and builds its Plan as CABPK would.
func build(t testing.TB, dir string) *bootstrap.Result {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "input.yaml"))
	require.NoError(t, err)
	defer f.Close()
	set, err := manifest.Parse(f)
	require.NoError(t, err)
	in, err := set.Input("")
	require.NoError(t, err)
	res, err := bootstrap.Build(context.Background(), *in)
	require.NoError(t, err)
	return res
}

// errorPaths returns the field paths of the problems in a Render error.
func errorPaths(t testing.TB, err error) []string {
	t.Helper()
	require.Error(t, err)
	var invalid *bootstrap.InvalidError
	require.ErrorAs(t, err, &invalid)
	var paths []string
	for _, p := range invalid.Problems {
		paths = append(paths, p.Path)
	}
	return paths
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func newGzip(w io.Writer) *gzip.Writer { return gzip.NewWriter(w) }
