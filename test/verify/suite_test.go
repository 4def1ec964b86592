// Package verify_test runs `nodeboot verify`, the real binary, against a real
// kube-apiserver and etcd (envtest) whose bootstrap data Secrets were
// written by CABPK's own reconciler (a test oracle only), as a user bound
// only to config/rbac/verify-role.yaml.
package verify_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	cabpk "sigs.k8s.io/cluster-api/bootstrap/kubeadm/reconcilers/kubeadmconfig"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/setup"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/feature"
	"sigs.k8s.io/cluster-api/util/kubeconfig"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// tokenTTL is short so that CABPK refreshes tokens during the run: a refresh
// (a new expiry in the workload cluster, the same token in the spec) must
// not make data compare differently.
const tokenTTL = 30 * time.Second

var (
	scheme = runtime.NewScheme()

	envOnce sync.Once
	env     *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	envErr  error

	binOnce sync.Once
	bin     string
	binErr  error
	tmpDir  string
)

func init() {
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	logger := logr.Discard()
	if os.Getenv("NODEBOOT_TEST_LOGS") != "" {
		logger = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	}
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	log.SetLogger(logger)
}

func TestMain(m *testing.M) {
	var err error
	if tmpDir, err = os.MkdirTemp("", "nodeboot-verify-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop envtest: %v\n", err)
		}
	}
	os.RemoveAll(tmpDir)
	os.Exit(code)
}

// startEnv starts the API server once, with Cluster API's CRDs.
func startEnv(t testing.TB) {
	t.Helper()
	envOnce.Do(func() {
		testenv.KubebuilderAssets(t)
		// What the objects use: MachinePool owners and format: ignition.
		if envErr = feature.Gates.(featuregate.MutableFeatureGate).Set("MachinePool=true," + string(feature.KubeadmBootstrapFormatIgnition) + "=true"); envErr != nil {
			return
		}
		var crds []*apiextensionsv1.CustomResourceDefinition
		if crds, envErr = testenv.CAPICRDs(); envErr != nil {
			return
		}
		env = &envtest.Environment{CRDInstallOptions: envtest.CRDInstallOptions{CRDs: crds}, ErrorIfCRDPathMissing: true}
		if cfg, envErr = env.Start(); envErr != nil {
			return
		}
		cfg.QPS, cfg.Burst = 200, 400
		k8s, envErr = client.New(cfg, client.Options{Scheme: scheme})
	})
	if envErr != nil {
		t.Fatalf("envtest: %v", envErr)
	}
}

var cabpkRuns atomic.Int32

// startCABPK runs CABPK v1.14.2's reconciler (the oracle writing the Secrets)
// until stop is called or the test ends.
func startCABPK(t testing.TB) (stop func()) {
	t.Helper()
	startEnv(t)
	grace := 20 * time.Second
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		GracefulShutdownTimeout: &grace,
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		// Cluster API registers informer names process-wide and panics on
		// a repeat, so each CABPK manager of the run gets its own.
		Cache:      setup.ManagerCacheOptions(scheme, fmt.Sprintf("cabpk-%d", cabpkRuns.Add(1)), "", 10*time.Minute),
		Client:     setup.ManagerClientOptions(),
		Controller: config.Controller{SkipNameValidation: ptr.To(true), UsePriorityQueue: ptr.To(true)},
	})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	secretCachingClient, err := setup.CreateSecretCachingClient(mgr)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: secretCachingClient,
		Cache:        setup.ClusterCacheCacheOptions(),
		Client:       setup.ClusterCacheClientOptions("cabpk", 100, 200),
	}, controller.Options{MaxConcurrentReconciles: 10})
	if err != nil {
		t.Fatalf("cluster cache: %v", err)
	}
	if err := (&cabpk.Reconciler{
		Client: mgr.GetClient(), SecretCachingClient: secretCachingClient, APIReader: mgr.GetAPIReader(),
		ClusterCache: cc, TokenTTL: tokenTTL,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 10}); err != nil {
		t.Fatalf("setup CABPK: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(grace + 10*time.Second):
				t.Errorf("CABPK's manager did not stop")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// nodebootBin builds the CLI once.
func nodebootBin(t testing.TB) string {
	t.Helper()
	if buildBin(); binErr != nil {
		t.Fatal(binErr)
	}
	return bin
}

func buildBin() {
	binOnce.Do(func() {
		bin = filepath.Join(tmpDir, "nodeboot")
		cmd := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "./cmd/nodeboot")
		cmd.Dir = testenv.ModuleRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
}

// result of one nodeboot verify run.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// rows are the stdout lines of one config.
func (r result) rows(ns, name string) []string {
	prefix := "KubeadmConfig " + ns + "/" + name + ": "
	var out []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, strings.TrimPrefix(l, prefix))
		}
	}
	return out
}

func (r result) lastLine() string {
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	return lines[len(lines)-1]
}

func runVerify(t testing.TB, kubeconfigFile string, args ...string) result {
	t.Helper()
	cmd := exec.Command(nodebootBin(t), append([]string{"verify", "--kubeconfig", kubeconfigFile}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run nodeboot verify: %v", err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

var (
	userOnce sync.Once
	roUser   string // kubeconfig of a user bound only to verify-role.yaml
	noUser   string // kubeconfig of a user with no role at all
	userErr  error
)

// users writes the kubeconfigs of the read-only verifier and of a user
// without any binding; the role is config/rbac/verify-role.yaml as shipped.
func users(t testing.TB) (readOnly, none string) {
	t.Helper()
	startEnv(t)
	userOnce.Do(func() {
		role, err := testenv.ShippedRole("verify-role.yaml")
		if err != nil {
			userErr = err
			return
		}
		for _, r := range role.Rules {
			for _, v := range r.Verbs {
				if v != "get" && v != "list" {
					userErr = fmt.Errorf("verify-role.yaml grants %q on %v: read-only means get and list", v, r.Resources)
					return
				}
			}
		}
		ctx := context.Background()
		verifier, err := testenv.BindUser(ctx, env, cfg, k8s, role, "verifier")
		if err != nil {
			userErr = err
			return
		}
		write := func(name string, u *envtest.AuthenticatedUser) string {
			kc, err := u.KubeConfig()
			if err != nil {
				userErr = err
				return ""
			}
			p := filepath.Join(tmpDir, name+".kubeconfig")
			if err := os.WriteFile(p, kc, 0o600); err != nil {
				userErr = err
			}
			return p
		}
		roUser = write("verifier", verifier)
		nobody, err := env.AddUser(envtest.User{Name: "nobody"}, cfg)
		if err != nil {
			userErr = err
			return
		}
		if userErr == nil {
			noUser = write("nobody", nobody)
		}
	})
	if userErr != nil {
		t.Fatalf("users: %v", userErr)
	}
	return roUser, noUser
}

// newNamespace creates a namespace for one group of objects.
func newNamespace(t testing.TB, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// applyInput creates the objects of a vector's input.yaml in ns as Cluster
// API would have: owners first, status through the status subresource,
// owner references to the real UIDs. It returns the KubeadmConfig's name.
func applyInput(ns string, raw []byte) (string, error) {
	ctx := context.Background()
	rank := map[string]int{"Secret": 0, "KubeadmControlPlane": 1, "KubeadmConfigTemplate": 1, "Cluster": 2, "Machine": 3, "MachinePool": 3, "KubeadmConfig": 4}
	var docs []map[string]any
	r := utilyaml.NewYAMLReader(bufioReader(raw))
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
			return "", err
		}
		docs = append(docs, m)
	}
	sort.SliceStable(docs, func(i, j int) bool { return rank[docs[i]["kind"].(string)] < rank[docs[j]["kind"].(string)] })
	uids := map[string]types.UID{}
	name := ""
	for _, doc := range docs {
		u := &unstructured.Unstructured{Object: doc}
		kind := u.GetKind()
		status, hasStatus := doc["status"]
		delete(doc, "status")
		u.SetNamespace(ns)
		u.SetUID("")
		u.SetResourceVersion("")
		if kind == "KubeadmConfig" {
			refs := u.GetOwnerReferences()
			for i := range refs {
				refs[i].UID = uids[refs[i].Kind+"/"+refs[i].Name]
			}
			u.SetOwnerReferences(refs)
			name, hasStatus = u.GetName(), false
		}
		if err := k8s.Create(ctx, u); err != nil {
			return "", fmt.Errorf("create %s %s: %w", kind, u.GetName(), err)
		}
		uids[kind+"/"+u.GetName()] = u.GetUID()
		if hasStatus && (kind == "Cluster" || kind == "Machine" || kind == "MachinePool") {
			u.Object["status"] = status
			if err := k8s.Status().Update(ctx, u); err != nil {
				return "", fmt.Errorf("update status of %s %s: %w", kind, u.GetName(), err)
			}
		}
	}
	return name, nil
}

// createCluster creates a Cluster named name in ns with provisioned
// infrastructure, the given certificate Secrets, and a kubeconfig Secret
// pointing at envtest, which stands in for the workload cluster where
// CABPK creates bootstrap tokens.
func createCluster(t testing.TB, ns, name string, certs []*corev1.Secret) *clusterv1.Cluster {
	t.Helper()
	ctx := context.Background()
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "10.0.0.100", Port: 6443},
			InfrastructureRef:    clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerCluster", Name: name},
			ClusterNetwork: clusterv1.ClusterNetwork{
				Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"192.168.0.0/16"}},
				Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"10.96.0.0/12"}},
			},
		},
	}
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	setInitialized(t, c, false)
	for _, s := range certs {
		s = s.DeepCopy()
		s.Namespace, s.ResourceVersion, s.UID = ns, "", ""
		s.Name = strings.Replace(s.Name, "test-cluster", name, 1)
		s.Labels = map[string]string{clusterv1.ClusterNameLabel: name}
		if err := k8s.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := k8s.Create(ctx, kubeconfig.GenerateSecret(c, kubeconfig.FromEnvTestConfig(cfg, c))); err != nil {
		t.Fatal(err)
	}
	return c
}

// setInitialized sets the Cluster's ControlPlaneInitialized condition, as
// Cluster API's core controllers do once the first control plane is up.
func setInitialized(t testing.TB, c *clusterv1.Cluster, initialized bool) {
	t.Helper()
	status, reason := metav1.ConditionFalse, "WaitingForControlPlane"
	if initialized {
		status, reason = metav1.ConditionTrue, "Initialized"
	}
	c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	c.Status.Initialization.ControlPlaneInitialized = ptr.To(initialized)
	c.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: status, Reason: reason, LastTransitionTime: metav1.Now()}}
	if err := k8s.Status().Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// vectorCerts are the reference vectors' fixed cluster certificate Secrets.
func vectorCerts(t testing.TB) []*corev1.Secret {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.VectorsDir(t), "cc-join-cp-minimal-v1.33", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*corev1.Secret
	r := utilyaml.NewYAMLReader(bufioReader(raw))
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		s := &corev1.Secret{}
		if yaml.Unmarshal(doc, s) == nil && s.Kind == "Secret" {
			out = append(out, s)
		}
	}
	if len(out) < 4 {
		t.Fatalf("expected the four cluster certificate Secrets, found %d", len(out))
	}
	return out
}

// waitForData waits until every KubeadmConfig in the namespaces has its
// data Secret.
func waitForData(t testing.TB, timeout time.Duration, namespaces ...string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	for {
		missing := 0
		var last string
		for _, ns := range namespaces {
			var list bootstrapv1.KubeadmConfigList
			if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			for _, c := range list.Items {
				if c.Status.DataSecretName == "" {
					missing++
					last = ns + "/" + c.Name + " (" + string(c.Spec.Format) + ")"
					for _, cond := range c.Status.Conditions {
						if cond.Status != metav1.ConditionTrue {
							last += " " + cond.Type + "=" + cond.Reason + ": " + cond.Message
						}
					}
				}
			}
		}
		if missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, %d KubeadmConfigs still have no data (e.g. %s)", timeout, missing, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
