package addons

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/addons"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
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

// TestFetchHandler: the endpoint answers a manifest only for its config's
// credential, sent in the Authorization header, and under its own digest;
// every other request gets the same 404 (or 405 for other methods),
// whatever is wrong.
func TestFetchHandler(t *testing.T) {
	manifest := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n")
	sum := addons.Digest(manifest)
	token := strings.Repeat("t", 43)
	tampered := fetchSecret("ns", "tampered", token, manifest)
	tampered.Data[sum] = append([]byte("# changed\n"), manifest...)
	wrongType := fetchSecret("ns", "opaque", token, manifest)
	wrongType.Type = corev1.SecretTypeOpaque
	notOwned := fetchSecret("ns", "stolen", token, manifest)
	notOwned.OwnerReferences[0].Name = "other"
	secrets := []*corev1.Secret{fetchSecret("ns", "cp-0", token, manifest), fetchSecret("ns", "cp-1", "other-token-"+token, manifest),
		tampered, wrongType, notOwned}
	objs := []client.Object{}
	for _, s := range secrets {
		objs = append(objs, s, &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: s.OwnerReferences[0].Name, UID: "u1"}})
	}
	c := fakeClient(t, objs...)
	idx := NewFetchIndex(c)
	idx.Wait = time.Millisecond
	for _, s := range secrets {
		idx.Add(s)
	}
	idx.MarkSynced()
	h := &FetchHandler{Reader: c, Credentials: idx}
	for _, tc := range []struct {
		name, method, target, token string
		code                        int
	}{
		{"the config's manifest", http.MethodGet, FetchPath + "ns/cp-0/" + sum, token, http.StatusOK},
		{"HEAD", http.MethodHead, FetchPath + "ns/cp-0/" + sum, token, http.StatusOK},
		{"another config's token", http.MethodGet, FetchPath + "ns/cp-1/" + sum, token, http.StatusNotFound},
		{"no token", http.MethodGet, FetchPath + "ns/cp-0/" + sum, "", http.StatusNotFound},
		{"token prefix", http.MethodGet, FetchPath + "ns/cp-0/" + sum, token[:20], http.StatusNotFound},
		{"token in the query", http.MethodGet, FetchPath + "ns/cp-0/" + sum + "?token=" + token, "", http.StatusNotFound},
		{"unknown digest", http.MethodGet, FetchPath + "ns/cp-0/" + strings.Repeat("0", 64), token, http.StatusNotFound},
		{"changed manifest", http.MethodGet, FetchPath + "ns/tampered/" + sum, token, http.StatusNotFound},
		{"not a fetch Secret", http.MethodGet, FetchPath + "ns/opaque/" + sum, token, http.StatusNotFound},
		{"another owner", http.MethodGet, FetchPath + "ns/stolen/" + sum, token, http.StatusNotFound},
		{"no such config", http.MethodGet, FetchPath + "ns/cp-9/" + sum, token, http.StatusNotFound},
		{"traversal", http.MethodGet, FetchPath + "ns/..%2Fcp-0/" + sum, token, http.StatusNotFound},
		{"extra segment", http.MethodGet, FetchPath + "ns/cp-0/" + sum + "/x", token, http.StatusNotFound},
		{"upper-case digest", http.MethodGet, FetchPath + "ns/cp-0/" + strings.ToUpper(sum), token, http.StatusNotFound},
		{"outside the prefix", http.MethodGet, "/ns/cp-0/" + sum, token, http.StatusNotFound},
		{"POST", http.MethodPost, FetchPath + "ns/cp-0/" + sum, token, http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(tc.method, tc.target, nil)
			if tc.token != "" {
				r.Header.Set("Authorization", "Bearer "+tc.token)
			}
			h.ServeHTTP(w, r)
			require.Equal(t, tc.code, w.Code)
			if tc.code == http.StatusOK && tc.method == http.MethodGet {
				require.Equal(t, manifest, w.Body.Bytes())
				require.Equal(t, "no-store", w.Header().Get("Cache-Control"))
			} else {
				require.NotContains(t, w.Body.String(), "apiVersion")
			}
		})
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
	require.ErrorContains(t, err, "is not the add-on fetch Secret")
	require.NotContains(t, err.Error(), token)
}
