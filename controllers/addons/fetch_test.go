package addons

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nodeboot/nodeboot/addons"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/controllers/bootstrapdata"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// fetchSecret is a config's fetch Secret holding one manifest.
func fetchSecret(ns, config, token string, manifest []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: FetchSecretName(config), OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "bootstrap.cluster.x-k8s.io/v1beta2", Kind: "KubeadmConfig", Name: config, UID: "u1", Controller: ptr.To(true)}}},
		Type: FetchSecretType,
		Data: map[string][]byte{FetchTokenKey: []byte(token), addons.Digest(manifest): manifest},
	}
}

// TestFetchFallbackOnlyOverBudget: the fallback is taken only when the
// add-ons inline exceed the budget, keeps the credential of an existing
// fetch Secret (data rendered again points at what the node already has)
// and refuses a Secret of that name that is not this config's.
func TestFetchFallbackOnlyOverBudget(t *testing.T) {
	dir := filepath.Join(testenv.VectorsDir(t), "cc-init-minimal-v1.33")
	fetch := FetchOptions{URL: "https://nodeboot.example:9444", CABundle: testenv.TestCABundle(t)}
	cni := builtinAddon("cni", addonsv1.BuiltinFlannel, 0)

	fits := NewExtension(fakeClient(t, cni), ExtensionOptions{MaxBytes: 16384, Compress: true, Fetch: fetch})
	in := vectorInput(t, dir)
	labelCluster(in)
	res, err := buildWith(t, fits, in)
	require.NoError(t, err)
	require.Empty(t, res.Secrets)
	require.Empty(t, res.Conditions)

	// Uncompressed, Flannel alone does not fit 16 KiB.
	over := ExtensionOptions{MaxBytes: 16384, Fetch: fetch}
	in = vectorInput(t, dir)
	labelCluster(in)
	res, err = buildWith(t, NewExtension(fakeClient(t, cni), over), in)
	require.NoError(t, err)
	require.Len(t, res.Secrets, 1)
	out, err := res.Render()
	require.NoError(t, err)
	require.LessOrEqual(t, len(out.Data), 16384)
	token := string(res.Secrets[0].Data[FetchTokenKey])
	require.Len(t, token, 43)
	require.NotContains(t, string(out.Data), "?token=", "the credential travels in a header, not in the URL")
	for _, c := range res.Plan.Commands {
		require.NotContains(t, c.Script, token, "nor on a command line")
	}

	existing := res.Secrets[0].DeepCopy()
	in = vectorInput(t, dir)
	labelCluster(in)
	res, err = buildWith(t, NewExtension(fakeClient(t, cni, existing), over), in)
	require.NoError(t, err)
	require.Equal(t, token, string(res.Secrets[0].Data[FetchTokenKey]), "a re-render must keep the credential")

	foreign := existing.DeepCopy()
	foreign.OwnerReferences[0].Name = "someone-else"
	in = vectorInput(t, dir)
	labelCluster(in)
	_, err = buildWith(t, NewExtension(fakeClient(t, cni, foreign), over), in)
	var conflict *bootstrapdata.SecretConflictError
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, FetchSecretName(in.Config.Name), conflict.Name)
	require.NotContains(t, err.Error(), token)

	// One nothing controls (its config deleted with --cascade=orphan) is
	// taken over with a new credential; one of another type is not.
	orphan := existing.DeepCopy()
	orphan.OwnerReferences = nil
	in = vectorInput(t, dir)
	labelCluster(in)
	res, err = buildWith(t, NewExtension(fakeClient(t, cni, orphan), over), in)
	require.NoError(t, err)
	require.Len(t, res.Secrets, 1)
	require.NotEqual(t, token, string(res.Secrets[0].Data[FetchTokenKey]), "an orphan's credential is not this config's")
	opaque := orphan.DeepCopy()
	opaque.Type = corev1.SecretTypeOpaque
	in = vectorInput(t, dir)
	labelCluster(in)
	_, err = buildWith(t, NewExtension(fakeClient(t, cni, opaque), over), in)
	require.ErrorAs(t, err, &conflict)
}
