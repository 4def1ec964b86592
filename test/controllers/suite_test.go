// Package controllers_test runs nodeboot's KubeadmConfig reconciler against a
// real kube-apiserver and etcd (controller-runtime envtest) carrying Cluster
// API v1.14.2's CRDs, and compares it with CABPK's own reconciler, imported
// here as a test oracle only.
package controllers_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	cabpk "sigs.k8s.io/cluster-api/bootstrap/kubeadm/reconcilers/kubeadmconfig"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/setup"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/controllers"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

var (
	scheme = runtime.NewScheme()

	envOnce sync.Once
	env     *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	envErr  error

	managerSeq atomic.Int64

	// logs receives every log line of the run: ours, CABPK's, controller-runtime's, client-go's.
	logs = testenv.CaptureLogs()
)

func init() {
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme, addonsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		// Scan before stopping: the token Secrets are still readable. An
		// API server that never started has nothing to scan.
		if k8s != nil {
			if err := scanLogs(context.Background()); err != nil {
				fmt.Fprintf(os.Stderr, "FAIL: log scan: %v\n", err)
				code = 1
			}
		}
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop envtest: %v\n", err)
		}
	}
	os.Exit(code)
}

// startEnv starts the shared API server once, with Cluster API's CRDs and
// nodeboot's FirstBootAddon CRD.
func startEnv(t testing.TB) {
	t.Helper()
	envOnce.Do(func() {
		testenv.KubebuilderAssets(t)
		crds, err := testenv.CAPICRDs()
		if err != nil {
			envErr = err
			return
		}
		own, err := addonCRDs()
		if err != nil {
			envErr = err
			return
		}
		crds = append(crds, own...)
		env = &envtest.Environment{
			CRDInstallOptions:     envtest.CRDInstallOptions{CRDs: crds},
			ErrorIfCRDPathMissing: true,
		}
		cfg, envErr = env.Start()
		if envErr != nil {
			return
		}
		cfg.QPS, cfg.Burst = 100, 200
		k8s, envErr = client.New(cfg, client.Options{Scheme: scheme})
	})
	if envErr != nil {
		t.Fatalf("envtest: %v", envErr)
	}
}

// addonCRDs loads the generated FirstBootAddon CRD from config/crd/addons,
// the file the release manifests ship.
func addonCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := filepath.Glob(filepath.Join(testenv.ModuleRoot(), "config", "crd", "addons", "addons.nodeboot.dev_*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no FirstBootAddon CRD in config/crd/addons")
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// provider selects the reconciler a manager runs.
type provider string

const (
	nodeboot provider = "nodeboot"
	oracle   provider = "cabpk"
)

type managerOptions struct {
	provider    provider
	namespaces  []string // empty: all namespaces
	tokenTTL    time.Duration
	concurrency int
	// wrap intercepts the manager's client (the one the reconciler writes with).
	wrap func(client.Client) client.Client
	// wrapRemote intercepts workload-cluster clients.
	wrapRemote func(client.Client) client.Client
	extensions []controllersExtension
	// addons links first-boot add-ons as cmd/manager does: the add-on
	// extension (after extensions) reading through the manager's client,
	// and the FirstBootAddon reconciler reading workload clusters through
	// the ClusterCache. nodeboot only.
	addons *addonsctrl.ExtensionOptions
	// strict is the manager's --strict flag. nodeboot only.
	strict bool
	// grace is the graceful shutdown timeout; 30s when zero.
	grace time.Duration
	// runnables are added to the manager beside the reconciler.
	runnables []manager.Runnable
	// shutdown, when set, receives the verdict on the manager's shutdown
	// (nil when clean) instead of failing the test with it.
	shutdown func(error)
	// config is the manager's credentials; envtest's administrator when nil.
	config *rest.Config
	// transport wraps every management-cluster request of the manager,
	// its caches' lists and watches included.
	transport func(http.RoundTripper) http.RoundTripper
	// cache, when set, is the manager's cache options (namespaces still
	// from namespaces); CABPK's setup.ManagerCacheOptions when nil.
	cache *ctrlcache.Options
	// built, when set, is handed the manager before it starts.
	built func(manager.Manager)
}

// startManager runs a manager with one KubeadmConfig reconciler until the
// returned stop function is called (also at test cleanup).
func startManager(t testing.TB, o managerOptions) (stop func()) {
	t.Helper()
	startEnv(t)
	if o.tokenTTL == 0 {
		o.tokenTTL = controllers.DefaultTokenTTL
	}
	if o.concurrency == 0 {
		o.concurrency = 10
	}
	name := fmt.Sprintf("%s-manager-%d", o.provider, managerSeq.Add(1))
	grace := 30 * time.Second
	if o.grace > 0 {
		grace = o.grace
	}
	mcfg := cfg
	if o.config != nil {
		mcfg = o.config
	}
	if o.transport != nil {
		mcfg = rest.CopyConfig(mcfg)
		mcfg.Wrap(o.transport)
	}
	mgr, err := ctrl.NewManager(mcfg, ctrl.Options{
		GracefulShutdownTimeout: &grace,
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		Cache:                   cacheOptions(name, o.namespaces, o.cache),
		Client:                  setup.ManagerClientOptions(),
		Controller:              config.Controller{SkipNameValidation: ptr.To(true), UsePriorityQueue: ptr.To(true)},
		NewClient: func(c *rest.Config, opts client.Options) (client.Client, error) {
			if o.wrap == nil {
				return client.New(c, opts)
			}
			cl, err := client.NewWithWatch(c, opts)
			if err != nil {
				return nil, err
			}
			return o.wrap(cl), nil
		},
	})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	if o.built != nil {
		o.built(mgr)
	}
	ctx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), logr.Discard()))
	ctx = ctrl.LoggerInto(ctx, ctrl.Log.WithName(name))
	secretCachingClient, err := setup.CreateSecretCachingClient(mgr)
	if err != nil {
		t.Fatal(err)
	}
	var cc clustercache.ClusterCache
	cc, err = clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: secretCachingClient,
		Cache:        setup.ClusterCacheCacheOptions(),
		Client:       setup.ClusterCacheClientOptions(name, 100, 200),
	}, controller.Options{MaxConcurrentReconciles: 10})
	if err != nil {
		t.Fatalf("cluster cache: %v", err)
	}
	if o.wrapRemote != nil {
		cc = &wrappedClusterCache{ClusterCache: cc, wrap: o.wrapRemote}
	}
	opts := controller.Options{MaxConcurrentReconciles: o.concurrency}
	switch o.provider {
	case nodeboot:
		extensions := o.extensions
		if o.addons != nil {
			extensions = append(extensions, addonsctrl.NewExtension(mgr.GetClient(), *o.addons))
			err = (&addonsctrl.FirstBootAddonReconciler{Client: mgr.GetClient(), Workloads: cc}).SetupWithManager(mgr, opts)
			if err != nil {
				t.Fatalf("setup FirstBootAddon reconciler: %v", err)
			}
		}
		err = (&controllers.Reconciler{
			Client: mgr.GetClient(), SecretCachingClient: secretCachingClient, APIReader: mgr.GetAPIReader(),
			ClusterCache: cc, TokenTTL: o.tokenTTL, Extensions: extensions, Strict: o.strict,
		}).SetupWithManager(ctx, mgr, opts)
	case oracle:
		err = (&cabpk.Reconciler{
			Client: mgr.GetClient(), SecretCachingClient: secretCachingClient, APIReader: mgr.GetAPIReader(),
			ClusterCache: cc, TokenTTL: o.tokenTTL,
		}).SetupWithManager(ctx, mgr, opts)
	}
	if err != nil {
		t.Fatalf("setup %s: %v", o.provider, err)
	}
	for _, r := range o.runnables {
		if err := mgr.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	// Every goroutine the manager starts inherits this label, so at shutdown
	// the stuck ones are told from those of other managers and tests.
	go pprof.Do(ctx, pprof.Labels(managerLabel, name), func(ctx context.Context) { done <- mgr.Start(ctx) })
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			var verdict error
			select {
			case err := <-done:
				var excused string
				verdict, excused = judgeShutdown(err, name)
				if excused != "" {
					t.Logf("manager %s: %s", name, excused)
				}
			case <-time.After(grace + 30*time.Second):
				verdict = fmt.Errorf("manager %s did not stop", name)
			}
			if o.shutdown != nil {
				o.shutdown(verdict)
			} else if verdict != nil {
				t.Error(verdict)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func cacheOptions(name string, namespaces []string, own *ctrlcache.Options) ctrlcache.Options {
	opts := setup.ManagerCacheOptions(scheme, name, "", 10*time.Minute)
	if own != nil {
		opts = *own
	}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]ctrlcache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = ctrlcache.Config{}
		}
	}
	return opts
}

// wrappedClusterCache hands out intercepted workload-cluster clients.
type wrappedClusterCache struct {
	clustercache.ClusterCache
	wrap func(client.Client) client.Client
}

func (w *wrappedClusterCache) GetClient(ctx context.Context, key client.ObjectKey) (client.Client, error) {
	c, err := w.ClusterCache.GetClient(ctx, key)
	if err != nil {
		return nil, err
	}
	return w.wrap(c), nil
}

// update changes an object the running manager may be writing too: it reads
// the object afresh, applies change and retries on a conflict, as any client
// beside a controller must.
func update(t testing.TB, obj client.Object, change func()) {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	ctx := context.Background()
	if err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := k8s.Get(ctx, key, obj); err != nil {
			return err
		}
		change()
		return k8s.Update(ctx, obj)
	}); err != nil {
		t.Fatal(err)
	}
}

// newNamespace creates a namespace for one test case.
func newNamespace(t testing.TB, prefix string) string {
	t.Helper()
	startEnv(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// eventually polls cond until it returns true or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, lastErr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// decodeDocs splits multi-document YAML into objects.
func decodeDocs(t testing.TB, raw []byte) []map[string]any {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufioReader(raw))
	var out []map[string]any
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// countingReconciles counts writes to KubeadmConfigs, to detect retry loops.
type countingReconciles struct{ patches atomic.Int64 }

func (c *countingReconciles) wrap(cl client.Client) client.Client {
	return interceptor.NewClient(cl.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*bootstrapv1.KubeadmConfig); ok {
				c.patches.Add(1)
			}
			return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}

type controllersExtension = controllers.Extension
