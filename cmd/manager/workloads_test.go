package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// workloadServer is a stand-in workload API server that answers every GET
// of a Secret with a Secret named after the server, and records what it got.
type workloadServer struct {
	*httptest.Server
	mu     sync.Mutex
	paths  []string
	agents []string
}

func newWorkloadServer(t *testing.T, name string) *workloadServer {
	t.Helper()
	s := &workloadServer{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.Method+" "+r.URL.Path)
		s.agents = append(s.agents, r.UserAgent())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
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
