// Package report_test runs bootstrap reports end to end: the nodeboot
// reconciler with the report extension on envtest, the report endpoint over
// TLS, and the rendered data run by the real cloud-init and the real
// Ignition engine in chroots, whose spooled reports are then flushed to the
// endpoint (the sandboxes have no network).
package report_test

import (
	"context"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/setup"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/nodeboot/nodeboot/controllers"
	nodereportctrl "github.com/nodeboot/nodeboot/controllers/nodereport"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

var (
	scheme = runtime.NewScheme()
	// logs receives every log line of the manager, the handler and client-go.
	logs = testenv.CaptureLogs()
)

func init() {
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
}

// env is envtest with Cluster API's CRDs, and a manager running the
// nodeboot reconciler with the report extension and the report endpoint.
type env struct {
	cfg  *rest.Config
	k8s  client.Client
	addr string // the endpoint, https://addr
}

func startEnv(t *testing.T) *env {
	t.Helper()
	testenv.KubebuilderAssets(t)
	crds, err := testenv.CAPICRDs()
	if err != nil {
		t.Fatal(err)
	}
	te := &envtest.Environment{CRDInstallOptions: envtest.CRDInstallOptions{CRDs: crds}, ErrorIfCRDPathMissing: true}
	cfg, err := te.Start()
	if err != nil {
		t.Fatalf("envtest: %v", err)
	}
	t.Cleanup(func() { _ = te.Stop() })
	cfg.QPS, cfg.Burst = 100, 200
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &env{cfg: cfg, k8s: k8s}
}

// startManager runs the manager as cmd/manager would with reporting on.
func (e *env) startManager(t *testing.T) {
	t.Helper()
	certDir := t.TempDir()
	ca := testenv.ServingCertificate(t, certDir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	ln.Close()
	mgr, err := ctrl.NewManager(e.cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  setup.ManagerCacheOptions(scheme, "report-test", "", 10*time.Minute),
		Client:                 setup.ManagerClientOptions(),
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ctx = ctrl.LoggerInto(ctx, ctrl.Log.WithName("manager"))
	secretCachingClient, err := setup.CreateSecretCachingClient(mgr)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: secretCachingClient,
		Cache:        setup.ClusterCacheCacheOptions(),
		Client:       setup.ClusterCacheClientOptions("report-test", 100, 200),
	}, controller.Options{MaxConcurrentReconciles: 4})
	if err != nil {
		t.Fatal(err)
	}
	err = (&controllers.Reconciler{
		Client: mgr.GetClient(), SecretCachingClient: secretCachingClient, APIReader: mgr.GetAPIReader(), ClusterCache: cc,
		Extensions: []controllers.Extension{&nodereportctrl.Extension{URL: "https://" + e.addr, CABundle: ca}},
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 4})
	if err != nil {
		t.Fatal(err)
	}
	// As cmd/manager wires it: a credential index of its own, configs from
	// the manager's cache.
	idx := nodereportctrl.NewCredentialIndex(mgr.GetCache())
	idx.RESTConfig, idx.Scheme = mgr.GetConfig(), mgr.GetScheme()
	if err := mgr.Add(idx); err != nil {
		t.Fatal(err)
	}
	handler := &nodereportctrl.Handler{Credentials: idx, Reader: mgr.GetAPIReader(), Client: mgr.GetClient(),
		Recorder: mgr.GetEventRecorderFor("nodeboot-report")} //nolint:staticcheck // the handler takes the core/v1 recorder.
	if err := mgr.Add(&nodereportctrl.Server{Addr: e.addr, CertDir: certDir, Handler: handler}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		stopping := time.Now()
		defer func() { t.Logf("manager stopped in %s", time.Since(stopping).Round(time.Second)) }()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop")
		}
	})
}

const clusterName = "c1"

// createInit creates a namespace with a Cluster whose infrastructure is
// ready, and its first control-plane Machine with config spec.
func (e *env) createInit(t *testing.T, prefix string, annotations map[string]string, spec bootstrapv1.KubeadmConfigSpec) string {
	t.Helper()
	ctx := context.Background()
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := e.k8s.Create(ctx, nsObj); err != nil {
		t.Fatal(err)
	}
	ns := nsObj.Name
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: clusterName, Namespace: ns},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "10.0.0.100", Port: 6443},
			InfrastructureRef:    clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerCluster", Name: clusterName},
		},
	}
	if err := e.k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	c.Status.Initialization.ControlPlaneInitialized = ptr.To(false)
	c.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: metav1.ConditionFalse, Reason: "WaitingForControlPlane", LastTransitionTime: metav1.Now()}}
	if err := e.k8s.Status().Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "cp-0", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName, clusterv1.MachineControlPlaneLabel: ""}},
		Spec: clusterv1.MachineSpec{
			ClusterName:       clusterName,
			Version:           "v1.33.4",
			Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: "cp-0"}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachine", Name: "cp-0"},
		},
	}
	if err := e.k8s.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	kc := &bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{
			Name: "cp-0", Namespace: ns, Annotations: annotations,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: clusterName},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "cp-0", UID: m.UID}},
		},
		Spec: spec,
	}
	if err := e.k8s.Create(ctx, kc); err != nil {
		t.Fatal(err)
	}
	return ns
}

// data waits for the config's bootstrap data.
func (e *env) data(t *testing.T, ns string) []byte {
	t.Helper()
	var s corev1.Secret
	eventually(t, 60*time.Second, "the bootstrap data of "+ns, func() bool {
		return e.k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cp-0"}, &s) == nil
	})
	return s.Data["value"]
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
