package differential

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/secret"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestBatchSchemaAgreesWithTool: the batched loader (testenv.CloudInitLoad)
// that the differential uses for a thousand documents gives, per document,
// the verdict of the shell tool the rest of the suite trusts. The sample is
// CABPK's own bytes and nodeboot's corrected bytes for generated configs, so
// it holds documents either way.
func TestBatchSchemaAgreesWithTool(t *testing.T) {
	t.Parallel()
	enableGates(t)
	certs := secret.NewCertificatesForInitialControlPlane(nil)
	require.NoError(t, certs.Generate())
	scenarios, _ := draw(t, 15, 777, bootstrapv1.CloudConfig, (*gen).spec)
	dir := t.TempDir()
	var files []string
	var docs [][]byte
	add := func(name string, data []byte) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o600))
		files = append(files, p)
		docs = append(docs, data)
	}
	for _, s := range scenarios {
		objs := objects(t, s, certs)
		want := cabpk(t, s, objs)
		if want.err == nil {
			add(s.name+".cabpk", want.data)
		}
		if _, data, err := nodeboot(s, objs, want.token, map[string]string{bootstrap.AnnotationCloudInitCorrections: "true"}); err == nil {
			add(s.name+".corrected", data)
		}
	}
	// Two hand-made ones: the smallest valid document and a schema error.
	add("valid.yaml", []byte("#cloud-config\nruncmd:\n- echo hi\n"))
	add("invalid.yaml", []byte("#cloud-config\nmounts:\n- [ /dev/sdb, /mnt, ext4, defaults, 0, 2 ]\n"))
	require.GreaterOrEqual(t, len(files), 25)

	batch := testenv.CloudInitLoad(t, docs)
	tool := testenvVerdicts(t, files)
	valid, invalid := 0, 0
	for i, f := range files {
		if batch[i].Valid {
			valid++
		} else {
			invalid++
		}
		require.Equal(t, tool[f], batch[i].Valid, "%s: cloudinit-validate says valid=%v, CloudInitLoad says valid=%v (%s)",
			filepath.Base(f), tool[f], batch[i].Valid, firstLine(batch[i].Error))
	}
	t.Logf("%d documents, %d valid and %d invalid by both", len(files), valid, invalid)
	require.Positive(t, valid, "the sample must hold valid documents")
	require.Positive(t, invalid, "the sample must hold invalid documents")
}

func testenvVerdicts(t *testing.T, files []string) map[string]bool {
	t.Helper()
	res, _ := testenv.CloudInitValidate(t, files)
	return res
}
