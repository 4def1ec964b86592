package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Errors of the workload-cluster clients. The kubeconfig's content is never
// part of a message: it carries the cluster's credentials.
var (
	// errNoKubeconfig: the Cluster's kubeconfig Secret is missing or has no
	// value key.
	errNoKubeconfig = errors.New("workload cluster kubeconfig Secret missing or without its value key")
	// errBadKubeconfig: the kubeconfig does not parse or asks for an exec
	// or auth-provider plugin (which a controller must not run, as in
	// Cluster API's ClusterCache).
	errBadKubeconfig = errors.New("workload cluster kubeconfig is invalid")
)

// workloadIdle is how long an unused workload-cluster client is kept.
const workloadIdle = 15 * time.Minute

// workloadClients hands out uncached clients for workload clusters, built
// from each Cluster's kubeconfig Secret, instead of Cluster API's
// ClusterCache. The reconcilers only get, create and update bootstrap token
// Secrets and read one ConfigMap there; ClusterCache connects to every
// Cluster up front and keeps per cluster a discovery REST mapper of all its
// API groups (0.5 MiB on envtest, more on a cluster with many CRDs), a
// cache, two HTTP clients and a health probe — most of a manager's memory at
// 50 Clusters. Here a cluster costs one HTTP client and a static mapper of
// the two kinds, connected on first use.
//
// A client is rebuilt when the kubeconfig Secret's resourceVersion changes
// (rotated credentials) and dropped when the Secret is gone or the client
// was not used for workloadIdle.
type workloadClients struct {
	// secrets reads the kubeconfig Secrets (cached: they carry the
	// cluster-name label).
	secrets   client.Reader
	scheme    *runtime.Scheme
	userAgent string
	qps       float32
	burst     int
	timeout   time.Duration
	// self is this manager's Pod (POD_NAMESPACE, POD_NAME, POD_UID), nil
	// when they are not all set. A workload cluster where that Pod runs is
	// the management cluster itself (after clusterctl move onto it): it is
	// reached at inCluster's host with inCluster's CA, as ClusterCache
	// does, not through the control-plane endpoint, whose load balancer
	// may not take traffic back from its own nodes.
	self      *metav1.ObjectMeta
	inCluster func() (*rest.Config, error)

	mu      sync.Mutex
	clients map[client.ObjectKey]*workloadClient
	swept   time.Time
}

type workloadClient struct {
	version  string // the kubeconfig Secret's resourceVersion
	client   client.Client
	http     *http.Client
	lastUsed time.Time
}

func newWorkloadClients(secrets client.Reader, scheme *runtime.Scheme, userAgent string, qps float32, burst int) *workloadClients {
	w := &workloadClients{
		secrets: secrets, scheme: scheme, userAgent: userAgent, qps: qps, burst: burst,
		// ClusterCache's default client timeout.
		timeout:   10 * time.Second,
		clients:   map[client.ObjectKey]*workloadClient{},
		inCluster: rest.InClusterConfig,
	}
	ns, name, uid := os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME"), os.Getenv("POD_UID")
	if ns != "" && name != "" && uid != "" {
		w.self = &metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}
	}
	return w
}

// GetClient returns a client for the workload cluster of cluster; reads are
// not cached.
func (w *workloadClients) GetClient(ctx context.Context, cluster client.ObjectKey) (client.Client, error) {
	sec := &corev1.Secret{}
	key := client.ObjectKey{Namespace: cluster.Namespace, Name: secret.Name(cluster.Name, secret.Kubeconfig)}
	err := w.secrets.Get(ctx, key, sec)
	now := time.Now()
	w.mu.Lock()
	w.sweepLocked(now)
	if err != nil {
		defer w.mu.Unlock()
		if apierrors.IsNotFound(err) {
			w.dropLocked(cluster)
			return nil, fmt.Errorf("cluster %s: %w", klog.KRef(cluster.Namespace, cluster.Name), errNoKubeconfig)
		}
		return nil, fmt.Errorf("cluster %s: read kubeconfig Secret %s: %w", klog.KRef(cluster.Namespace, cluster.Name), key.Name, err)
	}
	if c, ok := w.clients[cluster]; ok && c.version == sec.ResourceVersion {
		c.lastUsed = now
		w.mu.Unlock()
		return c.client, nil
	}
	w.mu.Unlock()
	// Built without the lock: looking for this manager's Pod is a request
	// to that cluster, which must not hold up the others.
	c, err := w.build(ctx, sec)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", klog.KRef(cluster.Namespace, cluster.Name), err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.clients[cluster]; ok && old.version == sec.ResourceVersion {
		// Another reconcile built it meanwhile.
		c.http.CloseIdleConnections()
		c = old
	} else {
		w.dropLocked(cluster)
		w.clients[cluster] = c
	}
	c.lastUsed = now
	return c.client, nil
}

// GetUncachedClient is GetClient: no client here reads through a cache.
func (w *workloadClients) GetUncachedClient(ctx context.Context, cluster client.ObjectKey) (client.Client, error) {
	return w.GetClient(ctx, cluster)
}

func (w *workloadClients) build(ctx context.Context, sec *corev1.Secret) (*workloadClient, error) {
	raw, ok := sec.Data[secret.KubeconfigDataName]
	if !ok {
		return nil, errNoKubeconfig
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		// The parser's message may quote the kubeconfig.
		return nil, fmt.Errorf("%w: it does not parse", errBadKubeconfig)
	}
	if cfg.ExecProvider != nil || cfg.AuthProvider != nil {
		return nil, fmt.Errorf("%w: exec and auth-provider plugins are not supported", errBadKubeconfig)
	}
	cfg.UserAgent, cfg.QPS, cfg.Burst, cfg.Timeout = w.userAgent, w.qps, w.burst, w.timeout
	c, err := w.connect(cfg, sec.ResourceVersion)
	if err != nil || w.self == nil {
		return c, err
	}
	var pod corev1.Pod
	err = c.client.Get(ctx, client.ObjectKey{Namespace: w.self.Namespace, Name: w.self.Name}, &pod)
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || err == nil && pod.UID != w.self.UID:
		// Not this cluster, or credentials that may not tell: the
		// kubeconfig's endpoint, as without Pod metadata.
		return c, nil
	case err != nil:
		// Retried with the reconcile, as ClusterCache retries its connection.
		c.http.CloseIdleConnections()
		return nil, fmt.Errorf("look for this manager's Pod there: %w", err)
	}
	in, err := w.inCluster()
	if err != nil {
		c.http.CloseIdleConnections()
		return nil, fmt.Errorf("it is the cluster this manager runs in, whose in-cluster configuration is unusable: %w", err)
	}
	c.http.CloseIdleConnections()
	cfg.Host, cfg.CAFile, cfg.CAData = in.Host, in.CAFile, nil
	return w.connect(cfg, sec.ResourceVersion)
}

// connect makes the client of a workload cluster.
func (w *workloadClients) connect(cfg *rest.Config, version string) (*workloadClient, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: no HTTP client for it", errBadKubeconfig)
	}
	c, err := client.New(cfg, client.Options{Scheme: w.scheme, Mapper: workloadMapper(), HTTPClient: hc})
	if err != nil {
		return nil, fmt.Errorf("%w: no client for it", errBadKubeconfig)
	}
	return &workloadClient{version: version, client: c, http: hc}, nil
}

// workloadMapper maps the only kinds read or written in workload clusters
// (a Pod: this manager's, see workloadClients.self),
// so no discovery request is made and no API group list kept.
func workloadMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(corev1.SchemeGroupVersion.WithKind("Secret"), meta.RESTScopeNamespace)
	m.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	m.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	return m
}

func (w *workloadClients) dropLocked(cluster client.ObjectKey) {
	if c, ok := w.clients[cluster]; ok {
		c.http.CloseIdleConnections()
		delete(w.clients, cluster)
	}
}

// sweepLocked drops clients unused for workloadIdle, at most once a minute.
func (w *workloadClients) sweepLocked(now time.Time) {
	if now.Sub(w.swept) < time.Minute {
		return
	}
	w.swept = now
	for k, c := range w.clients {
		if now.Sub(c.lastUsed) > workloadIdle {
			w.dropLocked(k)
		}
	}
}
