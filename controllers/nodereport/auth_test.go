package nodereport

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/nodeboot/nodeboot/controllers/nodeauth"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// authEnv is a handler whose API reads are counted, with config cp-0 and
// its credential, and config old-0 whose credential Secret was left by an
// earlier config of the same name (another UID).
type authEnv struct {
	h     *Handler
	api   *testenv.CountingReader
	token string
	stale string
}

const authWait = 100 * time.Millisecond

func newAuthEnv(t *testing.T) *authEnv {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(s))
	require.NoError(t, bootstrapv1.AddToScheme(s))
	cfg := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cp-0", UID: "uid-cp-0"}}
	sec, err := NewCredentialSecret(cfg, "c1")
	require.NoError(t, err)
	old := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "old-0", UID: "uid-earlier"}}
	stale, err := NewCredentialSecret(old, "c1")
	require.NoError(t, err)
	old.UID = "uid-now"
	c := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&bootstrapv1.KubeadmConfig{}).WithObjects(cfg, sec, old, stale).Build()
	api := &testenv.CountingReader{Reader: c}
	e := &authEnv{api: api, token: string(sec.Data[CredentialKey]), stale: string(stale.Data[CredentialKey])}
	e.h = &Handler{Reader: api, Client: c, Credentials: testIndex(c, authWait, sec, stale)}
	return e
}

// testIndex is a synced credential index holding secrets, reading configs
// through c, whose refusals wait wait.
func testIndex(c client.Reader, wait time.Duration, secrets ...*corev1.Secret) *nodeauth.Index {
	idx := NewCredentialIndex(c)
	idx.Wait = wait
	for _, s := range secrets {
		idx.Add(s)
	}
	idx.MarkSynced()
	return idx
}

func (e *authEnv) post(config, token string) (int, time.Duration) {
	r := httptest.NewRequest(http.MethodPost, Path+"ns/"+config, strings.NewReader(`{"phase":"started"}`))
	r.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	start := time.Now()
	e.h.ServeHTTP(w, r)
	return w.Code, time.Since(start)
}

// TestStrangersCostNoAPIRead: a forged credential, another config's, or
// one for a config that does not exist is refused without a single API
// read, after the same wait whether or not the config exists; the node's
// own credential still works.
func TestStrangersCostNoAPIRead(t *testing.T) {
	e := newAuthEnv(t)
	for _, tc := range []struct{ name, config, token string }{
		{"forged", "cp-0", strings.Repeat("x", 43)},
		{"unknown config", "cp-9", e.token},
		{"unknown namespace's config", "cp-9", strings.Repeat("y", 43)},
		{"another config's", "old-0", e.token},
		{"oversized", "cp-0", strings.Repeat("z", 64<<10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, took := e.post(tc.config, tc.token)
			require.Equal(t, http.StatusUnauthorized, code)
			require.Zero(t, e.api.Reads.Load(), "API reads for a stranger's request")
			require.GreaterOrEqual(t, took, authWait, "a refusal answers after the same wait, whatever was wrong")
		})
	}
	code, _ := e.post("cp-0", e.token)
	require.Equal(t, http.StatusAccepted, code)
}

// TestStaleCredentialRefused: a credential Secret left by an earlier
// KubeadmConfig of the same name (its controller reference has the old
// UID) does not authenticate reports for the current one.
func TestStaleCredentialRefused(t *testing.T) {
	e := newAuthEnv(t)
	code, _ := e.post("old-0", e.stale)
	require.Equal(t, http.StatusUnauthorized, code)
}

// TestCredentialWrittenAMomentAgo: a report that arrives before the
// informer delivered its config's new credential waits for it and is
// accepted, without an API read.
func TestCredentialWrittenAMomentAgo(t *testing.T) {
	e := newAuthEnv(t)
	e.h.Credentials.Wait = 5 * time.Second
	cfg := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cp-0", UID: types.UID("uid-cp-0")}}
	fresh, err := NewCredentialSecret(cfg, "c1")
	require.NoError(t, err)
	go func() {
		time.Sleep(50 * time.Millisecond)
		e.h.Credentials.Add(fresh)
	}()
	code, took := e.post("cp-0", string(fresh.Data[CredentialKey]))
	require.Equal(t, http.StatusAccepted, code)
	require.Less(t, took, 5*time.Second, "answered when the index learnt the credential, not at the deadline")
}
