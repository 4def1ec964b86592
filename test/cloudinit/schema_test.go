package cloudinit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// validate runs cloud-init's own schema validator on files and returns, per
// file, whether it passed.
func validate(t *testing.T, files []string) map[string]bool {
	t.Helper()
	res, out := testenv.CloudInitValidate(t, files)
	t.Logf("cloudinit-validate:\n%s", out)
	return res
}

// TestSchemaFailsExactlyWhereWarned: CABPK's bytes fail cloud-init's schema
// exactly for the vectors nodeboot warns about, and with the corrections
// annotation every vector passes.
func TestSchemaFailsExactlyWhereWarned(t *testing.T) {
	dir := t.TempDir()
	var files []string
	warned := map[string]bool{}
	for _, v := range testenv.Vectors(t, "cc-") {
		name := filepath.Base(v)
		plain := renderVector(t, v, false)
		want, err := os.ReadFile(filepath.Join(v, "bootstrap-data"))
		require.NoError(t, err)
		require.Equal(t, string(want), string(plain.Data), "without the annotation the bytes stay CABPK's")
		fixed := renderVector(t, v, true)
		require.Empty(t, fixed.Warnings, "%s: corrected output still has hazards", name)
		p, c := filepath.Join(dir, name+".plain"), filepath.Join(dir, name+".corrected")
		require.NoError(t, os.WriteFile(p, plain.Data, 0o600))
		require.NoError(t, os.WriteFile(c, fixed.Data, 0o600))
		files = append(files, p, c)
		warned[p] = len(plain.Warnings) > 0
		for _, w := range plain.Warnings {
			t.Logf("%s: warning %s: %s", name, w.Path, w.Message)
		}
	}
	ok := validate(t, files)
	hazards := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".corrected") {
			require.True(t, ok[f], "%s: corrected output fails cloud-init's schema", f)
			continue
		}
		require.Equal(t, !warned[f], ok[f], "%s: schema verdict and nodeboot's warnings disagree", f)
		if warned[f] {
			hazards++
		}
	}
	require.GreaterOrEqual(t, hazards, 3, "the vectors carry at least the jinja, mounts and inactive hazards")
}

// TestEmbeddedExampleIsValid: the example `nodeboot render` shows newcomers
// passes the schema with no warning.
func TestEmbeddedExampleIsValid(t *testing.T) {
	input, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(), "cmd", "nodeboot", "example.yaml"))
	require.NoError(t, err)
	out := render(t, input, false)
	require.Empty(t, out.Warnings)
	f := writeTemp(t, "example.cloud-config", out.Data)
	require.True(t, validate(t, []string{f})[f])
}
