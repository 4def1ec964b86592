// Package ignition tests the Ignition provisioner end to end: CABPK's
// reference vectors, a differential test against CABPK's own renderer, and
// native Ignition v3 applied by the real Ignition engine.
package ignition

import (
	"compress/gzip"
	"encoding/base64"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/bootstrap"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// build reads a vector's input.yaml and builds its Plan as CABPK would.
func build(t testing.TB, dir string) *bootstrap.Result {
	t.Helper()
	return testenv.BuildVector(t, dir)
}

// errorPaths returns the field paths of the problems in a Render error.
func errorPaths(t testing.TB, err error) []string {
	t.Helper()
	require.Error(t, err)
	var invalid *bootstrap.InvalidError
	require.ErrorAs(t, err, &invalid)
	var paths []string
	for _, p := range invalid.Problems {
		paths = append(paths, p.Path.String())
	}
	return paths
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func newGzip(w io.Writer) *gzip.Writer { return gzip.NewWriter(w) }
