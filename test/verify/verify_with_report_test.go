package verify_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/setup"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/nodeboot/nodeboot/controllers"
	nodereportctrl "github.com/nodeboot/nodeboot/controllers/nodereport"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// reportWatchFilter keeps nodeboot's reconciler in this test to its own
// objects: the namespaces of TestVerify (CABPK's data) stay CABPK's.
const reportWatchFilter = "nodeboot-verify-report"

// TestVerifyWithReporting: nodeboot's own reconciler, with bootstrap
// reports on, writes the data of a cluster (init, joins, a MachinePool,
// both formats), every config's with a reporter and a fresh credential.
// verify, given the manager's report URL and CA bundle, rebuilds each with
// its stored credential and finds all of it identical; without them it
// says which flags it needs and fails instead of skipping; a credential
// changed behind its back is a difference.
func TestVerifyWithReporting(t *testing.T) {
	startEnv(t)
	ro, _ := users(t)
	go buildBin()
	const reportURL = "https://nodeboot-report.example.invalid:9445/base"
	ca := testenv.TestCABundle(t)
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	startNodeboot(t, &nodereportctrl.Extension{URL: reportURL, CABundle: ca})

	ctx := context.Background()
	ns := newNamespace(t, "report")
	t.Cleanup(func() { deleteNamespaceObjects(t, ns) })
	c := createCluster(t, ns, "cluster", vectorCerts(t))
	label := func(o client.Object) {
		t.Helper()
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
		labels := o.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[clusterv1.WatchLabel] = reportWatchFilter
		o.SetLabels(labels)
		if err := k8s.Patch(ctx, o, patch); err != nil {
			t.Fatal(err)
		}
	}
	label(c)
	g := &gen{r: rand.New(rand.NewPCG(11, 0x5eed))}
	formats := []bootstrapv1.Format{bootstrapv1.CloudConfig, bootstrapv1.Ignition}
	create := func(name string, own int, format bootstrapv1.Format) {
		t.Helper()
		spec, secrets := g.spec(name, format)
		if own == ownInit {
			spec.InitConfiguration.NodeRegistration = spec.JoinConfiguration.NodeRegistration
			spec.JoinConfiguration = bootstrapv1.JoinConfiguration{}
		}
		if err := createConfig(ns, "cluster", name, own, g.pick(versions...), spec, secrets); err != nil {
			t.Fatal(err)
		}
		label(&bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	}
	create("cp-0", ownInit, bootstrapv1.CloudConfig)
	waitForData(t, 2*time.Minute, ns)
	setInitialized(t, c, true)
	const joins = 9
	for j := 1; j <= joins; j++ {
		create(fmt.Sprintf("m-%03d", j), []int{ownWorker, ownWorker, ownControlPlane, ownPool}[j%4], formats[j%2])
	}
	waitForData(t, 2*time.Minute, ns)
	total := joins + 1
	var list bootstrapv1.KubeadmConfigList
	if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range list.Items {
		s := &corev1.Secret{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: nodereportctrl.CredentialSecretName(cfg.Name)}, s); err != nil {
			t.Fatalf("KubeadmConfig %s has no report credential: %v", cfg.Name, err)
		}
	}
	nodebootBin(t)

	t.Run("identical with the manager's report endpoint", func(t *testing.T) {
		r := runVerify(t, ro, "-n", ns, "--bootstrap-report-url", reportURL, "--bootstrap-report-ca-file", caFile)
		if want := fmt.Sprintf("identical: %d/%d", total, total); r.code != 0 || r.lastLine() != want {
			t.Fatalf("want %s:\n%s", want, r)
		}
	})

	t.Run("without the report endpoint", func(t *testing.T) {
		r := runVerify(t, ro, "-n", ns)
		if r.code != 1 || r.lastLine() != fmt.Sprintf("identical: 0/%d", total) {
			t.Fatalf("want exit 1 and nothing proven:\n%s", r)
		}
		for _, cfg := range list.Items {
			rows := r.rows(ns, cfg.Name)
			if len(rows) != 1 || !strings.HasPrefix(rows[0], "error: its data carries a bootstrap reporter: run verify with the manager's --bootstrap-report-url") {
				t.Errorf("%s: %q, want an error naming the flags", cfg.Name, rows)
			}
		}
	})

	t.Run("another report URL differs", func(t *testing.T) {
		r := runVerify(t, ro, "-n", ns, "--bootstrap-report-url", "https://elsewhere.example.invalid:9445/base", "--bootstrap-report-ca-file", caFile)
		if r.code != 1 || r.lastLine() != fmt.Sprintf("identical: 0/%d", total) {
			t.Fatalf("want every config to differ:\n%s", r)
		}
	})

	t.Run("credential changed", func(t *testing.T) {
		s := &corev1.Secret{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: nodereportctrl.CredentialSecretName("m-001")}, s); err != nil {
			t.Fatal(err)
		}
		old := string(s.Data[nodereportctrl.CredentialKey])
		s.Data[nodereportctrl.CredentialKey] = []byte(strings.Repeat("A", 43))
		if err := k8s.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		r := runVerify(t, ro, "-n", ns, "--bootstrap-report-url", reportURL, "--bootstrap-report-ca-file", caFile, "--diff")
		if want := fmt.Sprintf("identical: %d/%d", total-1, total); r.code != 1 || r.lastLine() != want {
			t.Fatalf("want %s:\n%s", want, r)
		}
		if rows := r.rows(ns, "m-001"); len(rows) == 0 || !strings.HasPrefix(rows[0], "differs: ") {
			t.Errorf("m-001: %q, want differs", rows)
		}
		for _, credential := range []string{old, strings.Repeat("A", 43)} {
			if strings.Contains(r.stdout+r.stderr, credential) {
				t.Errorf("a report credential is in the output:\n%s", r)
			}
		}
	})
}

// startNodeboot runs nodeboot's KubeadmConfig reconciler, as the manager
// does with the extensions given, on the objects labelled with
// reportWatchFilter, until the test ends.
func startNodeboot(t *testing.T, exts ...controllers.Extension) {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  setup.ManagerCacheOptions(scheme, "nodeboot-verify", "", 10*time.Minute),
		Client:                 setup.ManagerClientOptions(),
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	secretCachingClient, err := setup.CreateSecretCachingClient(mgr)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient:     secretCachingClient,
		Cache:            setup.ClusterCacheCacheOptions(),
		Client:           setup.ClusterCacheClientOptions("nodeboot-verify", 100, 200),
		WatchFilterValue: reportWatchFilter,
	}, controller.Options{MaxConcurrentReconciles: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&controllers.Reconciler{
		Client: mgr.GetClient(), SecretCachingClient: secretCachingClient, APIReader: mgr.GetAPIReader(), ClusterCache: cc,
		WatchFilterValue: reportWatchFilter, Extensions: exts,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 4}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("nodeboot's manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("nodeboot's manager did not stop")
		}
	})
}

// deleteNamespaceObjects removes what a test created in ns (envtest runs no
// namespace controller), so later --all-namespaces runs do not see it.
func deleteNamespaceObjects(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	for _, o := range []client.Object{&bootstrapv1.KubeadmConfig{}, &clusterv1.Machine{}, &clusterv1.MachinePool{}, &clusterv1.Cluster{}, &corev1.Secret{}} {
		if err := k8s.DeleteAllOf(ctx, o, client.InNamespace(ns)); err != nil {
			t.Errorf("delete %T in %s: %v", o, ns, err)
		}
	}
}
