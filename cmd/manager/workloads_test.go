package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// workloadServer is a stand-in workload API server that answers every GET
// of a Secret with a Secret named after the server, and records what it got.
// A Pod is found only when podUID is set, with that UID.
type workloadServer struct {
	*httptest.Server
	podUID string
	mu     sync.Mutex
	paths  []string
	agents []string
	auths  []string
}

func newWorkloadServer(t *testing.T, name string) *workloadServer {
	t.Helper()
	s := &workloadServer{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.Method+" "+r.URL.Path)
		s.agents = append(s.agents, r.UserAgent())
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		uid := s.podUID
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "/pods/") {
			if uid == "" {
				w.WriteHeader(http.StatusNotFound)
				_ = json.NewEncoder(w).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound})
				return
			}
			_ = json.NewEncoder(w).Encode(&corev1.Pod{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: "nodeboot-manager", Namespace: "nodeboot-system", UID: types.UID(uid)},
			})
			return
		}
		_ = json.NewEncoder(w).Encode(&corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		})
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *workloadServer) kubeconfig() []byte {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": "c",
		"clusters": []any{map[string]any{"name": "c", "cluster": map[string]any{"server": s.URL, "certificate-authority-data": ca}}},
		"users":    []any{map[string]any{"name": "u", "user": map[string]any{"token": "sekrit-token-value"}}},
		"contexts": []any{map[string]any{"name": "c", "context": map[string]any{"cluster": "c", "user": "u"}}},
	})
	return b
}

func kubeconfigSecret(cluster string, value []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secret.Name(cluster, secret.Kubeconfig), Namespace: "ns"},
		Data:       map[string][]byte{secret.KubeconfigDataName: value},
	}
}

// TestWorkloadClients: a client reaches the server its Cluster's kubeconfig
// names, with the manager's user agent and without discovery; it is reused
// until the kubeconfig Secret changes; a missing or unusable kubeconfig is
// an error that names the Cluster and quotes nothing of the kubeconfig.
func TestWorkloadClients(t *testing.T) {
	ctx := context.Background()
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	one, two := newWorkloadServer(t, "from-one"), newWorkloadServer(t, "from-two")
	mgmt := fake.NewClientBuilder().WithScheme(scheme).WithObjects(kubeconfigSecret("c1", one.kubeconfig())).Build()
	w := newWorkloadClients(mgmt, scheme, "nodeboot-test", 10, 20)
	key := client.ObjectKey{Namespace: "ns", Name: "c1"}

	get := func(want string) client.Client {
		t.Helper()
		c, err := w.GetClient(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		s := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "bootstrap-token-abcdef"}, s); err != nil {
			t.Fatal(err)
		}
		if s.Name != want {
			t.Fatalf("read %q, want %q: the client talks to the wrong server", s.Name, want)
		}
		return c
	}
	first := get("from-one")
	if again := get("from-one"); again != first {
		t.Error("an unchanged kubeconfig Secret gave a new client")
	}
	if got, want := strings.Join(one.paths, ","), "GET /api/v1/namespaces/kube-system/secrets/bootstrap-token-abcdef,GET /api/v1/namespaces/kube-system/secrets/bootstrap-token-abcdef"; got != want {
		t.Errorf("requests %s, want %s (no discovery)", got, want)
	}
	if one.agents[0] != "nodeboot-test" {
		t.Errorf("user agent %q", one.agents[0])
	}

	// Rotated credentials (a new resourceVersion) give a new client.
	sec := &corev1.Secret{}
	if err := mgmt.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "c1-kubeconfig"}, sec); err != nil {
		t.Fatal(err)
	}
	sec.Data[secret.KubeconfigDataName] = two.kubeconfig()
	if err := mgmt.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	if get("from-two") == first {
		t.Error("a changed kubeconfig Secret kept the old client")
	}

	// The Secret gone: an error, and the client is dropped.
	if err := mgmt.Delete(ctx, sec); err != nil {
		t.Fatal(err)
	}
	if _, err := w.GetClient(ctx, key); !errors.Is(err, errNoKubeconfig) || !strings.Contains(err.Error(), "ns/c1") {
		t.Errorf("missing kubeconfig: %v, want errNoKubeconfig naming ns/c1", err)
	}
	if len(w.clients) != 0 {
		t.Errorf("%d clients kept after the kubeconfig Secret was deleted", len(w.clients))
	}

	for name, value := range map[string]string{
		"garbage": "sekrit-token-value: [unclosed",
		"exec": `{"apiVersion":"v1","kind":"Config","current-context":"c","clusters":[{"name":"c","cluster":{"server":"https://h"}}],` +
			`"users":[{"name":"u","user":{"exec":{"apiVersion":"client.authentication.k8s.io/v1","command":"sekrit-token-value"}}}],"contexts":[{"name":"c","context":{"cluster":"c","user":"u"}}]}`,
	} {
		if err := mgmt.Create(ctx, kubeconfigSecret("c-"+name, []byte(value))); err != nil {
			t.Fatal(err)
		}
		_, err := w.GetClient(ctx, client.ObjectKey{Namespace: "ns", Name: "c-" + name})
		if !errors.Is(err, errBadKubeconfig) || strings.Contains(err.Error(), "sekrit") {
			t.Errorf("%s kubeconfig: %v, want errBadKubeconfig quoting nothing of it", name, err)
		}
	}
}

// TestWorkloadClientsOnTheirOwnCluster: with its Pod's metadata set, the
// manager looks for its Pod in each workload cluster once, through the
// kubeconfig's endpoint; where it finds it (same UID) it is on its own
// cluster (after clusterctl move) and talks to it at the in-cluster host
// with the in-cluster CA and the kubeconfig's credentials, as ClusterCache
// does; elsewhere (no such Pod, another UID) nothing changes.
func TestWorkloadClientsOnTheirOwnCluster(t *testing.T) {
	ctx := context.Background()
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	const podPath = "GET /api/v1/namespaces/nodeboot-system/pods/nodeboot-manager"
	const secretPath = "GET /api/v1/namespaces/kube-system/secrets/bootstrap-token-abcdef"
	for _, c := range []struct {
		name, uid      string
		self           bool
		wantServer     string
		wantLB, wantIn []string
	}{
		{name: "own cluster", uid: "uid-1", self: true, wantServer: "in-cluster", wantLB: []string{podPath}, wantIn: []string{secretPath}},
		{name: "another manager's Pod", uid: "uid-2", self: true, wantServer: "endpoint", wantLB: []string{podPath, secretPath}},
		{name: "no such Pod", self: true, wantServer: "endpoint", wantLB: []string{podPath, secretPath}},
		{name: "no Pod metadata", uid: "uid-1", wantServer: "endpoint", wantLB: []string{secretPath}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lb, in := newWorkloadServer(t, "endpoint"), newWorkloadServer(t, "in-cluster")
			lb.podUID = c.uid
			caFile := filepath.Join(t.TempDir(), "ca.crt")
			if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: in.Certificate().Raw}), 0o600); err != nil {
				t.Fatal(err)
			}
			mgmt := fake.NewClientBuilder().WithScheme(scheme).WithObjects(kubeconfigSecret("c1", lb.kubeconfig())).Build()
			w := newWorkloadClients(mgmt, scheme, "nodeboot-test", 10, 20)
			if c.self {
				w.self = &metav1.ObjectMeta{Namespace: "nodeboot-system", Name: "nodeboot-manager", UID: "uid-1"}
			}
			w.inCluster = func() (*rest.Config, error) {
				return &rest.Config{Host: in.URL, TLSClientConfig: rest.TLSClientConfig{CAFile: caFile}}, nil
			}
			cl, err := w.GetClient(ctx, client.ObjectKey{Namespace: "ns", Name: "c1"})
			if err != nil {
				t.Fatal(err)
			}
			s := &corev1.Secret{}
			if err := cl.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "bootstrap-token-abcdef"}, s); err != nil {
				t.Fatal(err)
			}
			if s.Name != c.wantServer {
				t.Errorf("read from %q, want %q", s.Name, c.wantServer)
			}
			if got, want := strings.Join(lb.paths, ","), strings.Join(c.wantLB, ","); got != want {
				t.Errorf("the kubeconfig's endpoint got %q, want %q", got, want)
			}
			if got, want := strings.Join(in.paths, ","), strings.Join(c.wantIn, ","); got != want {
				t.Errorf("the in-cluster host got %q, want %q", got, want)
			}
			for _, a := range append(append([]string(nil), lb.auths...), in.auths...) {
				if a != "Bearer sekrit-token-value" {
					t.Errorf("a request carried %q, want the kubeconfig's token", a)
				}
			}
		})
	}
}
