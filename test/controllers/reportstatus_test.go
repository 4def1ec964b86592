package controllers_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/locking"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/controllers"
	"github.com/nodeboot/nodeboot/controllers/bootstrapdata"
	nodereportctrl "github.com/nodeboot/nodeboot/controllers/nodereport"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// The tests below put the KubeadmConfig reconciler and the report handler,
// its two status writers, on the real API server and interleave them
// deterministically: one writer's status write is held while the other
// writes, which is the race a node's report and a reconcile run in
// production. Each fails when either writer's optimistic lock is removed.

// workloadIsEnvtest hands the reconciler the envtest API server as the
// workload cluster (where bootstrap tokens live).
type workloadIsEnvtest struct{}

func (workloadIsEnvtest) GetClient(context.Context, client.ObjectKey) (client.Client, error) {
	return k8s, nil
}

// withWatch is a client of the shared API server an interceptor can wrap.
func withWatch(t testing.TB) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// directReconciler is the nodeboot reconciler with the report extension as
// cmd/manager sets it up, called directly (no manager, no cache), writing
// through w.
func directReconciler(t testing.TB, w client.Client) *controllers.Reconciler {
	t.Helper()
	return &controllers.Reconciler{
		Client: w, SecretCachingClient: k8s, APIReader: k8s, ClusterCache: workloadIsEnvtest{},
		InitLock: locking.NewControlPlaneInitMutex(k8s), TokenTTL: controllers.DefaultTokenTTL,
		Extensions: []controllers.Extension{&nodereportctrl.Extension{URL: "https://127.0.0.1:1", CABundle: testenv.TestCABundle(t), Existing: k8s}},
	}
}

func reconcileConfig(t testing.TB, r *controllers.Reconciler, ns, name string) {
	t.Helper()
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}); err != nil {
		t.Fatalf("reconcile %s/%s: %v", ns, name, err)
	}
}

// credential is the config's current report credential, which h's index
// learns.
func credential(ctx context.Context, h *nodereportctrl.Handler, ns, name string) (string, error) {
	s := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: nodereportctrl.CredentialSecretName(name)}, s); err != nil {
		return "", err
	}
	h.Credentials.Add(s)
	return string(s.Data[nodereportctrl.CredentialKey]), nil
}

// newHandler is the report handler as cmd/manager runs it, writing
// through w. Its credential index is filled by credential (below) rather
// than by its informer: these tests are about status writes.
func newHandler(t testing.TB, w client.Client) *nodereportctrl.Handler {
	t.Helper()
	idx := nodereportctrl.NewCredentialIndex(k8s)
	idx.MarkSynced()
	return &nodereportctrl.Handler{Reader: k8s, Client: w, Credentials: idx}
}

// postReport sends one report to h as a node would.
func postReport(h http.Handler, ns, name, token, body string) int {
	req := httptest.NewRequest(http.MethodPost, nodereportctrl.Path+ns+"/"+name, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Code
}

// onStatusPatch wraps c: hook runs before each status patch of the
// KubeadmConfig ns/name, until it returns true.
func onStatusPatch(c client.WithWatch, ns, name string, hook func(ctx context.Context) bool) client.Client {
	var done atomic.Bool
	return interceptor.NewClient(c, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*bootstrapv1.KubeadmConfig); ok && sub == "status" && obj.GetNamespace() == ns && obj.GetName() == name && !done.Load() {
				done.Store(hook(ctx))
			}
			return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}

func condition(t testing.TB, ns, name, typ string) *metav1.Condition {
	t.Helper()
	c, err := getConfig(context.Background(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return conditions.Get(c, typ)
}

const failedKubeadm = `{"phase":"failed","step":"kubeadm","exitCode":3,"log":"error execution phase preflight: connection refused\n"}`

// TestReportDuringReconcileIsKept: a node reports its failure after the
// reconciler read the config and before it wrote the status; the failure
// survives that write (and Ready, which the reconciler computed without it,
// is recomputed False), and later reconciles keep it.
func TestReportDuringReconcileIsKept(t *testing.T) {
	ns := newNamespace(t, "status-race")
	createCluster(t, ns, clusterOptions{initialized: true, certs: true, kubeconfig: true})
	createMachine(t, ns, "w", worker, testSpec(worker, true))
	h := newHandler(t, k8s)
	code := 0
	r := directReconciler(t, onStatusPatch(withWatch(t), ns, "w", func(ctx context.Context) bool {
		// The credential is stored before the status is written.
		token, err := credential(ctx, h, ns, "w")
		if err != nil {
			return false
		}
		code = postReport(h, ns, "w", token, failedKubeadm)
		return true
	}))
	reconcileConfig(t, r, ns, "w")
	if code != http.StatusAccepted {
		t.Fatalf("the report during the reconcile got %d, want 202", code)
	}
	for i := range 3 {
		c := condition(t, ns, "w", nodereportctrl.NodeBootstrappedCondition)
		if c == nil || c.Reason != nodereportctrl.FailedReason || !strings.HasPrefix(c.Message, "kubeadm exited 3") {
			t.Fatalf("after reconcile %d: NodeBootstrapped %+v, want the node's failure", i+1, c)
		}
		if ready := condition(t, ns, "w", bootstrapv1.KubeadmConfigReadyCondition); ready == nil || ready.Status != metav1.ConditionFalse ||
			!strings.Contains(ready.Message, "kubeadm exited 3") {
			t.Fatalf("after reconcile %d: Ready %+v, want False naming the failure", i+1, ready)
		}
		if c := condition(t, ns, "w", bootstrapv1.KubeadmConfigDataSecretAvailableCondition); c == nil || c.Status != metav1.ConditionTrue {
			t.Fatalf("after reconcile %d: DataSecretAvailable %+v, want the reconciler's True", i+1, c)
		}
		reconcileConfig(t, r, ns, "w")
	}
}

// TestReconcileDuringReportIsKept: the reconciler writes (the config is
// paused: Paused becomes True) after the handler read the config and before
// it wrote the node's report; both writes survive.
func TestReconcileDuringReportIsKept(t *testing.T) {
	ns := newNamespace(t, "status-race")
	createCluster(t, ns, clusterOptions{initialized: true, certs: true, kubeconfig: true})
	createMachine(t, ns, "w", worker, testSpec(worker, true))
	r := directReconciler(t, k8s)
	reconcileConfig(t, r, ns, "w")
	if c := condition(t, ns, "w", nodereportctrl.NodeBootstrappedCondition); c == nil || c.Reason != nodereportctrl.PendingReason {
		t.Fatalf("NodeBootstrapped %+v after the data, want Pending", c)
	}
	ctx := context.Background()
	h := newHandler(t, onStatusPatch(withWatch(t), ns, "w", func(ctx context.Context) bool {
		kc, err := getConfig(ctx, ns, "w")
		if err != nil {
			t.Error(err)
			return true
		}
		p := client.MergeFrom(kc.DeepCopy())
		kc.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
		if err := k8s.Patch(ctx, kc, p); err != nil {
			t.Error(err)
			return true
		}
		reconcileConfig(t, r, ns, "w")
		if c := condition(t, ns, "w", clusterv1.PausedCondition); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("the reconciler did not write Paused True: %+v", c)
		}
		return true
	}))
	token, err := credential(ctx, h, ns, "w")
	if err != nil {
		t.Fatal(err)
	}
	if code := postReport(h, ns, "w", token, `{"phase":"started"}`); code != http.StatusAccepted {
		t.Fatalf("report: %d, want 202", code)
	}
	if c := condition(t, ns, "w", clusterv1.PausedCondition); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Paused %+v after the report, want the reconciler's True", c)
	}
	if c := condition(t, ns, "w", nodereportctrl.NodeBootstrappedCondition); c == nil || c.Reason != nodereportctrl.RunningReason {
		t.Errorf("NodeBootstrapped %+v, want the node's Running", c)
	}
}

// instanceResults reads the per-instance results of a MachinePool's config.
func instanceResults(t testing.TB, ns, name string) map[string]struct{ Result, Message string } {
	t.Helper()
	c, err := getConfig(context.Background(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]struct{ Result, Message string }{}
	if raw, ok := c.Annotations[nodebootv1.BootstrapReportsAnnotation]; ok {
		if err := json.Unmarshal([]byte(raw), &out); err != nil {
			t.Fatalf("annotation %s: %v", nodebootv1.BootstrapReportsAnnotation, err)
		}
	}
	return out
}

// TestMachinePoolReportsPerInstance: a MachinePool's instances share one
// config and credential; each reports under its node name, the condition
// summarises them, a failed instance makes Ready False, and a token
// rotation (new data, the same credential) resets no instance's result and
// locks out no instance still booting from the old data.
func TestMachinePoolReportsPerInstance(t *testing.T) {
	ns := newNamespace(t, "status-pool")
	createCluster(t, ns, clusterOptions{initialized: true, certs: true, kubeconfig: true})
	pool, _ := createMachinePool(t, ns, "pool", testSpec(worker, true))
	r := directReconciler(t, k8s)
	reconcileConfig(t, r, ns, "pool")
	ctx := context.Background()
	h := newHandler(t, k8s)
	h.Rate, h.Burst = 100, 100 // one config, many nodes
	token, err := credential(ctx, h, ns, "pool")
	if err != nil {
		t.Fatal(err)
	}
	send := func(token, node, body string, want int) {
		t.Helper()
		body = `{"node":"` + node + `",` + strings.TrimPrefix(body, "{")
		if code := postReport(h, ns, "pool", token, body); code != want {
			t.Fatalf("%s: %s got %d, want %d", node, body, code, want)
		}
	}
	wantCondition := func(reason, message string) {
		t.Helper()
		c := condition(t, ns, "pool", nodereportctrl.NodeBootstrappedCondition)
		if c == nil || c.Reason != reason || c.Message != message {
			t.Fatalf("NodeBootstrapped %+v, want %s %q", c, reason, message)
		}
	}
	const failure = "pool-c: kubeadm exited 3: error execution phase preflight: connection refused"
	send(token, "pool-a", `{"phase":"started"}`, http.StatusAccepted)
	send(token, "pool-b", `{"phase":"started"}`, http.StatusAccepted)
	wantCondition(nodereportctrl.RunningReason, "0/2 succeeded, 2 running")
	send(token, "pool-a", `{"phase":"succeeded"}`, http.StatusAccepted)
	send(token, "pool-b", `{"phase":"succeeded"}`, http.StatusAccepted)
	wantCondition(nodereportctrl.SucceededReason, "2/2 succeeded")
	send(token, "pool-c", `{"phase":"started"}`, http.StatusAccepted)
	send(token, "pool-c", failedKubeadm, http.StatusAccepted)
	wantCondition(nodereportctrl.FailedReason, "2/3 succeeded, 1 failed: "+failure)
	if ready := condition(t, ns, "pool", bootstrapv1.KubeadmConfigReadyCondition); ready == nil || ready.Status != metav1.ConditionFalse {
		t.Errorf("Ready %+v, want False while an instance failed", ready)
	}
	send(token, "pool-a", failedKubeadm, http.StatusOK)         // success is final
	send(token, "pool-c", `{"phase":"started"}`, http.StatusOK) // a late started does not hide the failure
	send(token, "Pool-D", `{"phase":"started"}`, http.StatusBadRequest)
	send(token, strings.Repeat("a", 254), `{"phase":"started"}`, http.StatusBadRequest)
	if code := postReport(h, ns, "pool", token, `{"phase":"started"}`); code != http.StatusBadRequest {
		t.Errorf("a pool's report without a node name got %d, want 400", code)
	}
	before := instanceResults(t, ns, "pool")
	if len(before) != 3 || before["pool-a"].Result != nodereportctrl.SucceededReason || before["pool-c"].Result != nodereportctrl.FailedReason {
		t.Fatalf("instances %+v, want pool-a, pool-b Succeeded and pool-c Failed", before)
	}

	// Rotation: the pool's nodes joined and its token is gone, so the
	// reconciler mints a new token and new data, with the same credential.
	pool.Status.NodeRefs = []corev1.ObjectReference{{Kind: "Node", Name: "pool-a"}, {Kind: "Node", Name: "pool-b"}}
	if err := k8s.Status().Update(ctx, pool); err != nil {
		t.Fatal(err)
	}
	oldToken, err := configToken(ctx, ns, "pool")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := tokenSecret(ctx, oldToken); err != nil {
		t.Fatal(err)
	} else if err := k8s.Delete(ctx, s); err != nil {
		t.Fatal(err)
	}
	reconcileConfig(t, r, ns, "pool")
	if tok, err := configToken(ctx, ns, "pool"); err != nil || tok == oldToken {
		t.Fatalf("no rotation: token %q (was %q), %v", tok, oldToken, err)
	}
	rotated, err := credential(ctx, h, ns, "pool")
	if err != nil || rotated != token {
		t.Fatalf("a new credential after the rotation (%v): instances booting from the old data would be locked out", err)
	}
	wantCondition(nodereportctrl.FailedReason, "2/3 succeeded, 1 failed: "+failure)
	if after := instanceResults(t, ns, "pool"); len(after) != 3 || after["pool-a"] != before["pool-a"] || after["pool-c"] != before["pool-c"] {
		t.Errorf("instances after the rotation %+v, want %+v", after, before)
	}
	// pool-d boots from the new data; pool-e from the old (launched before
	// its infrastructure provider took the new data), and reports after
	// the rotation all the same.
	send(rotated, "pool-d", `{"phase":"started"}`, http.StatusAccepted)
	send(token, "pool-e", `{"phase":"started"}`, http.StatusAccepted)
	wantCondition(nodereportctrl.FailedReason, "2/5 succeeded, 1 failed, 2 running: "+failure)
	send(rotated, "pool-d", `{"phase":"succeeded"}`, http.StatusAccepted)
	send(token, "pool-e", `{"phase":"succeeded"}`, http.StatusAccepted)
	wantCondition(nodereportctrl.FailedReason, "4/5 succeeded, 1 failed: "+failure)
	reconcileConfig(t, r, ns, "pool")
	wantCondition(nodereportctrl.FailedReason, "4/5 succeeded, 1 failed: "+failure)
}

// TestLeftoverCredentialSecret: a credential Secret nothing controls (what
// a KubeadmConfig deleted with --cascade=orphan leaves) is taken over by the
// new config of that name, with a credential of its own; one that another
// object controls (an earlier config of the name, another UID), or another
// type of Secret of that name, is never overwritten and the config gets no
// data.
func TestLeftoverCredentialSecret(t *testing.T) {
	ns := newNamespace(t, "status-leftover")
	createCluster(t, ns, clusterOptions{initialized: true, certs: true, kubeconfig: true})
	ctx := context.Background()
	const stale = "c3RhbGUtY3JlZGVudGlhbC1vZi1hbi1lYXJsaWVyLWNvbmZpZw"
	leftover := func(name string, typ corev1.SecretType, owners ...metav1.OwnerReference) {
		t.Helper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: nodereportctrl.CredentialSecretName(name), Namespace: ns, OwnerReferences: owners},
			Type: typ, Data: map[string][]byte{nodereportctrl.CredentialKey: []byte(stale)}}
		if err := k8s.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	leftover("orphan", nodereportctrl.CredentialSecretType)
	leftover("owned", nodereportctrl.CredentialSecretType, metav1.OwnerReference{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig",
		Name: "owned", UID: "uid-of-an-earlier-config", Controller: ptr.To(true)})
	leftover("opaque", corev1.SecretTypeOpaque)
	r := directReconciler(t, k8s)

	_, cfg := createMachine(t, ns, "orphan", worker, testSpec(worker, true))
	reconcileConfig(t, r, ns, "orphan")
	s := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: nodereportctrl.CredentialSecretName("orphan")}, s); err != nil {
		t.Fatal(err)
	}
	if c := metav1.GetControllerOf(s); c == nil || c.UID != cfg.UID || string(s.Data[nodereportctrl.CredentialKey]) == stale {
		t.Errorf("the orphaned credential Secret was not taken over with a new credential: controller %+v", c)
	}
	if c := condition(t, ns, "orphan", bootstrapv1.KubeadmConfigDataSecretAvailableCondition); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("orphan: DataSecretAvailable %+v", c)
	}

	for _, name := range []string{"owned", "opaque"} {
		createMachine(t, ns, name, worker, testSpec(worker, true))
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
		var conflict *bootstrapdata.SecretConflictError
		if !errors.As(err, &conflict) || conflict.Name != nodereportctrl.CredentialSecretName(name) {
			t.Errorf("%s: reconcile %v, want a refusal to overwrite", name, err)
		}
		// Retried (deleting the Secret is enough), and said on the config.
		if errors.Is(err, reconcile.TerminalError(nil)) {
			t.Errorf("%s: a terminal error; deleting the Secret must be enough", name)
		}
		if c := condition(t, ns, name, bootstrapv1.KubeadmConfigDataSecretAvailableCondition); c == nil || c.Status != metav1.ConditionFalse ||
			!strings.Contains(c.Message, nodereportctrl.CredentialSecretName(name)) || strings.Contains(c.Message, stale) {
			t.Errorf("%s: DataSecretAvailable %+v, want False naming the Secret", name, c)
		}
		s := &corev1.Secret{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: nodereportctrl.CredentialSecretName(name)}, s); err != nil {
			t.Fatal(err)
		}
		if string(s.Data[nodereportctrl.CredentialKey]) != stale {
			t.Errorf("%s: a Secret not the config's was overwritten", name)
		}
		kc := &bootstrapv1.KubeadmConfig{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, kc); err != nil {
			t.Fatal(err)
		}
		if kc.Status.DataSecretName != "" {
			t.Errorf("%s: data %s written beside a Secret that is not the config's", name, kc.Status.DataSecretName)
		}
	}
}
