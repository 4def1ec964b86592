package controllers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/nodeboot/nodeboot/controllers"
)

// requestLog records the manager's requests: path, query and Accept header.
type requestLog struct {
	mu   sync.Mutex
	reqs []loggedRequest
}

type loggedRequest struct{ method, path, query, accept string }

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.reqs = append(l.reqs, loggedRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Accept")})
		l.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// collections are the requests for a whole collection of resource (lists
// and watches, which is what a cache makes), and gets of one object.
func (l *requestLog) collections(resource string) (metadata, full, gets int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.reqs {
		if r.method != http.MethodGet {
			continue
		}
		parts := strings.Split(strings.Trim(r.path, "/"), "/")
		i := len(parts) - 1
		switch {
		case parts[i] == resource:
			if strings.Contains(r.accept, "as=PartialObjectMetadata") {
				metadata++
			} else {
				full++
			}
		case i > 0 && parts[i-1] == resource:
			gets++
		}
	}
	return metadata, full, gets
}

// secretCollections counts the lists and watches of Secrets and those
// without the cluster-name label selector.
func (l *requestLog) secretCollections() (n, unselected int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.reqs {
		if r.method != http.MethodGet || !strings.HasSuffix(r.path, "/secrets") {
			continue
		}
		n++
		q, _ := url.ParseQuery(r.query)
		if q.Get("labelSelector") != clusterv1.ClusterNameLabel {
			unselected++
		}
	}
	return n, unselected
}

// TestCachesHoldMetadataOnly: a manager built with cmd/manager's own cache
// options (controllers.ManagerCacheOptions) caches only the metadata of
// KubeadmConfigs and ConfigMaps (a management cluster's ConfigMaps can hold
// megabytes of manifests) and reads the config it reconciles whole from the
// API server; it lists and watches only Secrets with the cluster-name label;
// and what its cache holds is what the reconcilers read, nothing more:
// KubeadmConfig metadata without owner references or managed fields, the
// bootstrap data Secret without data or labels, the Machine with no status
// but its node reference.
func TestCachesHoldMetadataOnly(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "metacache")
	createCluster(t, ns, clusterOptions{initialized: true, certs: true, kubeconfig: true})
	var log requestLog
	var mgr manager.Manager
	opts := controllers.ManagerCacheOptions(scheme, "nodeboot-metacache", ns, 10*time.Minute)
	startManager(t, managerOptions{provider: nodeboot, cache: &opts, built: func(m manager.Manager) { mgr = m },
		addons: &managerAddonOptions, transport: log.wrap})
	machine, _ := createMachine(t, ns, "worker", worker, testSpec(worker, true))
	data := waitForData(t, ns, "worker")
	// Status the reconcilers never read, as Cluster API's Machine
	// controller writes it.
	machine.Status.Phase = "Provisioning"
	machine.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Provisioning", LastTransitionTime: metav1.Now()}}
	if err := k8s.Status().Update(ctx, machine); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		resource string
		readsOne bool
	}{{"kubeadmconfigs", true}, {"configmaps", false}} {
		metadata, full, gets := log.collections(c.resource)
		t.Logf("%s: %d metadata lists/watches, %d full, %d gets", c.resource, metadata, full, gets)
		if full > 0 {
			t.Errorf("%s: the manager listed or watched %d times with whole objects, want metadata only", c.resource, full)
		}
		if metadata == 0 {
			t.Errorf("%s: no metadata list or watch: the cache is not what this test thinks", c.resource)
		}
		if c.readsOne && gets == 0 {
			t.Errorf("%s: the reconciled config was never read from the API server", c.resource)
		}
	}
	if n, unselected := log.secretCollections(); n == 0 || unselected > 0 {
		t.Errorf("secrets: %d lists/watches, %d of them without the %s label selector", n, unselected, clusterv1.ClusterNameLabel)
	}

	// What the cache holds, read from the manager's cache itself: each
	// object the reconciler has handled is in it by now.
	key := client.ObjectKey{Namespace: ns, Name: "worker"}
	cached := &metav1.PartialObjectMetadata{}
	cached.SetGroupVersionKind(bootstrapv1.GroupVersion.WithKind("KubeadmConfig"))
	if err := mgr.GetCache().Get(ctx, key, cached); err != nil {
		t.Fatalf("cached KubeadmConfig metadata: %v", err)
	}
	if len(cached.OwnerReferences) > 0 || len(cached.ManagedFields) > 0 {
		t.Errorf("cached KubeadmConfig metadata keeps %d owner references and %d managed fields entries, want none", len(cached.OwnerReferences), len(cached.ManagedFields))
	}
	s := &corev1.Secret{}
	if err := mgr.GetCache().Get(ctx, client.ObjectKey{Namespace: ns, Name: data.Name}, s); err != nil {
		t.Fatalf("cached bootstrap data Secret: %v", err)
	}
	if len(s.Data) > 0 || len(s.Labels) > 0 || len(s.OwnerReferences) == 0 {
		t.Errorf("cached bootstrap data Secret: %d data keys, %d labels, %d owners; want only its owner", len(s.Data), len(s.Labels), len(s.OwnerReferences))
	}
	m := &clusterv1.Machine{}
	eventually(t, 30*time.Second, "the cache to see the Machine's status", func() (bool, error) {
		err := mgr.GetCache().Get(ctx, key, m)
		return err == nil && m.ResourceVersion == machine.ResourceVersion, err
	})
	if len(m.ManagedFields) > 0 || len(m.Status.Conditions) > 0 || m.Status.Phase != "" {
		t.Errorf("cached Machine keeps %d managed fields entries, %d conditions and phase %q, want none", len(m.ManagedFields), len(m.Status.Conditions), m.Status.Phase)
	}
}
