package addons

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/addons"
	"github.com/nodeboot/nodeboot/test/testenv"
)

const fetchWait = 100 * time.Millisecond

// fetchEnv is a fetch handler over configs cp-0 (UID u1) and old-0 (whose
// fetch Secret an earlier config of that name left: its owner reference
// has another UID), each with a 900 KiB manifest, API reads counted.
func fetchEnv(t *testing.T, token string, manifest []byte) (*FetchHandler, *testenv.CountingReader) {
	t.Helper()
	cfg := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cp-0", UID: "u1"}}
	old := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "old-0", UID: "u-now"}}
	sec, stale := fetchSecret("ns", "cp-0", token, manifest), fetchSecret("ns", "old-0", token, manifest)
	c := fakeClient(t, cfg, old, sec, stale)
	api := &testenv.CountingReader{Reader: c}
	idx := NewFetchIndex(c)
	idx.Wait = fetchWait
	idx.Add(sec)
	idx.Add(stale)
	idx.MarkSynced()
	return &FetchHandler{Reader: api, Credentials: idx}, api
}

func get(h http.Handler, target, token string) (*httptest.ResponseRecorder, time.Duration) {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(w, r)
	return w, time.Since(start)
}

// TestFetchStrangersCostNoAPIRead: a wrong credential or an unknown config
// gets the same 404 after the same wait and reads nothing from the API
// server (before, a wrong token read the whole 900 KiB Secret); the node's
// own credential in its header gets the manifest.
func TestFetchStrangersCostNoAPIRead(t *testing.T) {
	manifest := []byte("# " + strings.Repeat("x", 900<<10) + "\n")
	sum := addons.Digest(manifest)
	token := strings.Repeat("t", 43)
	h, api := fetchEnv(t, token, manifest)
	for _, tc := range []struct{ name, target, token string }{
		{"forged", FetchPath + "ns/cp-0/" + sum, strings.Repeat("f", 43)},
		{"unknown config", FetchPath + "ns/cp-9/" + sum, token},
		{"unknown namespace", FetchPath + "other/cp-0/" + sum, token},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, took := get(h, tc.target, tc.token)
			require.Equal(t, http.StatusNotFound, w.Code)
			require.Zero(t, api.Reads.Load(), "API reads for a stranger's request")
			require.GreaterOrEqual(t, took, fetchWait, "a refusal answers after the same wait, whatever was wrong")
		})
	}
	w, _ := get(h, FetchPath+"ns/cp-0/"+sum, token)
	require.Equal(t, http.StatusOK, w.Code)
	require.Equal(t, manifest, w.Body.Bytes())
}

// TestFetchStaleOwnerRefused: a fetch Secret whose controller reference
// names the config but carries an earlier config's UID is not served.
func TestFetchStaleOwnerRefused(t *testing.T) {
	manifest := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n")
	token := strings.Repeat("t", 43)
	h, _ := fetchEnv(t, token, manifest)
	w, _ := get(h, FetchPath+"ns/old-0/"+addons.Digest(manifest), token)
	require.Equal(t, http.StatusNotFound, w.Code)
}

// TestFetchCredentialInHeaderOnly: the credential is taken from the
// Authorization header, the one transport of both node endpoints; in the
// query it is refused.
func TestFetchCredentialInHeaderOnly(t *testing.T) {
	manifest := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n")
	sum := addons.Digest(manifest)
	token := strings.Repeat("t", 43)
	h, _ := fetchEnv(t, token, manifest)
	w, _ := get(h, FetchPath+"ns/cp-0/"+sum, token)
	require.Equal(t, http.StatusOK, w.Code)
	w, _ = get(h, FetchPath+"ns/cp-0/"+sum+"?token="+token, "")
	require.Equal(t, http.StatusNotFound, w.Code)
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
