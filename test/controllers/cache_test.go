package controllers_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
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

// TestCachesHoldMetadataOnly: the manager caches only the metadata of
// KubeadmConfigs and ConfigMaps (a management cluster's ConfigMaps can hold
// megabytes of manifests), and reads the config it reconciles whole from
// the API server.
func TestCachesHoldMetadataOnly(t *testing.T) {
	ns := newNamespace(t, "metacache")
	createCluster(t, ns, clusterOptions{initialized: true, certs: true, kubeconfig: true})
	var log requestLog
	startManager(t, managerOptions{provider: nodeboot, namespaces: []string{ns}, addons: &managerAddonOptions, transport: log.wrap})
	createMachine(t, ns, "worker", worker, testSpec(worker, true))
	waitForData(t, ns, "worker")

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
}
