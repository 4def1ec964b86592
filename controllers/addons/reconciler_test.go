package addons

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/addons"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

var sel = metav1.LabelSelector{MatchLabels: map[string]string{"cni": "flannel"}}

func addon(name string, spec addonsv1.FirstBootAddonSpec) *addonsv1.FirstBootAddon {
	spec.ClusterSelector = sel
	return &addonsv1.FirstBootAddon{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Generation: 1}, Spec: spec}
}

func reconcileOne(t *testing.T, r *FirstBootAddonReconciler, name string) (*addonsv1.FirstBootAddon, ctrl.Result) {
	t.Helper()
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "default", Name: name}})
	require.NoError(t, err)
	got := &addonsv1.FirstBootAddon{}
	require.NoError(t, r.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, got))
	return got, res
}

// TestBadSpecsNameTheField: each bad spec gives a SourceValid=False condition
// whose reason says what kind of problem and whose message names the field.
// (The CRD schema rejects several of these at admission; the fake client
// does not run it, which is the case of objects stored before the schema.)
func TestBadSpecsNameTheField(t *testing.T) {
	sha := addons.Digest([]byte("x"))
	cases := []struct {
		name, reason, field string
		spec                addonsv1.FirstBootAddonSpec
		objs                []client.Object
	}{
		{"two sources", addonsv1.InvalidSpecReason, "spec.url: Forbidden: must not be set together with spec.builtin",
			addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "flannel"}, URL: &addonsv1.URLSource{URL: "https://h/x.yaml", SHA256: sha}}, nil},
		{"no source", addonsv1.InvalidSpecReason, "spec: Required value: exactly one of builtin, manifests and url must be set",
			addonsv1.FirstBootAddonSpec{}, nil},
		{"missing sha256", addonsv1.InvalidSpecReason, "spec.url.sha256: Required value",
			addonsv1.FirstBootAddonSpec{URL: &addonsv1.URLSource{URL: "https://h/x.yaml"}}, nil},
		{"bad sha256", addonsv1.InvalidSpecReason, "spec.url.sha256: Invalid value",
			addonsv1.FirstBootAddonSpec{URL: &addonsv1.URLSource{URL: "https://h/x.yaml", SHA256: "abc"}}, nil},
		{"unknown builtin", addonsv1.UnknownBuiltinReason, `spec.builtin.name: Unsupported value: "calico": supported values: "flannel", "nodelocaldns"`,
			addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "calico"}}, nil},
		{"unknown version", addonsv1.UnknownBuiltinReason, `spec.builtin.version: Unsupported value: "v9"`,
			addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "flannel", Version: "v9"}}, nil},
		{"bad parameter", addonsv1.InvalidSpecReason, `spec.builtin.nodeLocalDNS.localIP: Invalid value: "10.0.0.1": must be a link-local address`,
			addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "nodelocaldns", NodeLocalDNS: &addonsv1.NodeLocalDNSParameters{LocalIP: "10.0.0.1"}}}, nil},
		{"parameters of another builtin", addonsv1.InvalidSpecReason, "spec.builtin.flannel: Forbidden",
			addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "nodelocaldns", Flannel: &addonsv1.FlannelParameters{}}}, nil},
		{"ConfigMap that does not exist", addonsv1.SourceNotFoundReason, `spec.manifests.name: Not found: "ConfigMap default/missing"`,
			addonsv1.FirstBootAddonSpec{Manifests: &addonsv1.ManifestsSource{Kind: addonsv1.ManifestsConfigMap, Name: "missing"}}, nil},
		{"malformed manifest", addonsv1.MalformedManifestReason, "spec.manifests: Invalid value: \"ConfigMap default/bad\": ConfigMap default/bad data[b.yaml] document 2: kind is missing",
			addonsv1.FirstBootAddonSpec{Manifests: &addonsv1.ManifestsSource{Kind: addonsv1.ManifestsConfigMap, Name: "bad"}},
			[]client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "default"}, Data: map[string]string{
				"a.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ok\n",
				"b.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ok2\n---\napiVersion: v1\nmetadata:\n  name: nokind\n",
			}}}},
		{"manifest that is not YAML", addonsv1.MalformedManifestReason, "spec.manifests: Invalid value: \"Secret default/bad\": Secret default/bad data[a.yaml] document 1: not YAML",
			addonsv1.FirstBootAddonSpec{Manifests: &addonsv1.ManifestsSource{Kind: addonsv1.ManifestsSecret, Name: "bad"}},
			[]client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "default"}, Data: map[string][]byte{"a.yaml": []byte("kind: [unclosed\n")}}}},
		{"bad selector", addonsv1.InvalidSpecReason, "spec.clusterSelector: Invalid value",
			addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "flannel"}}, nil},
		// Both pass Kubernetes and the CRD, and the init node's data would
		// refuse them for good.
		{"name that is no DNS label", addonsv1.InvalidSpecReason, `metadata.name: Invalid value: "dns.cache"`,
			addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "flannel"}}, nil},
		{"URL version with a slash", addonsv1.InvalidSpecReason, `spec.url.version: Invalid value: "release/1.2"`,
			addonsv1.FirstBootAddonSpec{URL: &addonsv1.URLSource{URL: "https://h/x.yaml", SHA256: sha, Version: "release/1.2"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "a"
			if c.name == "name that is no DNS label" {
				name = "dns.cache"
			}
			a := addon(name, c.spec)
			if c.name == "bad selector" {
				a.Spec.ClusterSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Sideways"}}
			}
			r := &FirstBootAddonReconciler{Client: fakeClient(t, append(c.objs, a)...)}
			got, _ := reconcileOne(t, r, name)
			cond := meta.FindStatusCondition(got.Status.Conditions, addonsv1.SourceValidCondition)
			require.NotNil(t, cond)
			require.Equal(t, metav1.ConditionFalse, cond.Status)
			require.Equal(t, c.reason, cond.Reason)
			require.Contains(t, cond.Message, c.field)
			require.Empty(t, got.Status.Digest)
			require.Equal(t, int64(1), got.Status.ObservedGeneration)
		})
	}
}

// fakeWorkloads serves one workload client for every Cluster, or an error.
type fakeWorkloads struct {
	c   client.Client
	err error
}

func (f fakeWorkloads) GetUncachedClient(context.Context, client.ObjectKey) (client.Client, error) {
	return f.c, f.err
}

func TestPerClusterStatus(t *testing.T) {
	created := time.Now().Truncate(time.Second)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "src", Namespace: "default"}, Data: map[string]string{
		"a.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n",
	}}
	// The ConfigMap's one document as the node gets it: behind a "---" line.
	digest := addons.Digest([]byte("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n"))
	cluster := func(name string, initialized bool) *clusterv1.Cluster {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"cni": "flannel"}}}
		status := metav1.ConditionFalse
		if initialized {
			status = metav1.ConditionTrue
		}
		// Initialized an hour before the add-on was created, or never.
		c.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: status, Reason: "x", LastTransitionTime: metav1.NewTime(created.Add(-time.Hour))}}
		return c
	}
	record := func(result, sum string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: addons.RecordName, Namespace: addons.RecordNamespace},
			Data: map[string]string{"m.sha256": sum, "m.result": result, "m.version": "-"}}
	}
	late := false
	mk := func() *addonsv1.FirstBootAddon {
		a := addon("m", addonsv1.FirstBootAddonSpec{Manifests: &addonsv1.ManifestsSource{Kind: addonsv1.ManifestsConfigMap, Name: "src"}})
		if late {
			a.CreationTimestamp = metav1.NewTime(created)
		}
		return a
	}
	cases := []struct {
		name      string
		clusters  []client.Object
		workloads WorkloadClusters
		phase     addonsv1.AddonPhase
		applied   metav1.ConditionStatus
		reason    string
		requeue   bool
	}{
		{"no cluster", nil, nil, "", metav1.ConditionFalse, addonsv1.NoClustersReason, false},
		{"not initialized", []client.Object{cluster("c1", false)}, nil, addonsv1.AddonPending, metav1.ConditionFalse, addonsv1.PendingReason, true},
		{"unreachable", []client.Object{cluster("c1", true)}, fakeWorkloads{err: errors.New("connection refused")}, addonsv1.AddonUnknown, metav1.ConditionFalse, addonsv1.PendingReason, true},
		{"no record yet", []client.Object{cluster("c1", true)}, fakeWorkloads{c: fakeClient(t)}, addonsv1.AddonPending, metav1.ConditionFalse, addonsv1.PendingReason, true},
		{"applied", []client.Object{cluster("c1", true)}, fakeWorkloads{c: fakeClient(t, record("applied", digest))}, addonsv1.AddonApplied, metav1.ConditionTrue, addonsv1.AppliedReason, false},
		{"failed", []client.Object{cluster("c1", true)}, fakeWorkloads{c: fakeClient(t, record("failed: sha256 mismatch: got 00", digest))}, addonsv1.AddonFailed, metav1.ConditionFalse, addonsv1.ApplyFailedReason, false},
		// Created after the control plane was initialized: never in the
		// first control-plane node's data, so never applied; no requeue.
		{"late, no record", []client.Object{cluster("c1", true)}, fakeWorkloads{c: fakeClient(t)}, addonsv1.AddonFailed, metav1.ConditionFalse, addonsv1.ApplyFailedReason, false},
		{"late, recorded by an earlier object of the name", []client.Object{cluster("c1", true)}, fakeWorkloads{c: fakeClient(t, record("applied", digest))}, addonsv1.AddonApplied, metav1.ConditionTrue, addonsv1.AppliedReason, false},
		// The init node's data was built, without it, before the add-on
		// was created and before the control plane was initialized: never
		// applied, though created before the condition turned True.
		{"built without it", []client.Object{cluster("c1", true), dataSecret(cluster("c1", true), "init", "other")}, fakeWorkloads{c: fakeClient(t)}, addonsv1.AddonFailed, metav1.ConditionFalse, addonsv1.ApplyFailedReason, false},
		// Re-created (or moved) after the control plane was initialized:
		// the init data carried its name, so the node's record is awaited.
		{"late, carried by name", []client.Object{cluster("c1", true), dataSecret(cluster("c1", true), "init", "m,other")}, fakeWorkloads{c: fakeClient(t)}, addonsv1.AddonPending, metav1.ConditionFalse, addonsv1.PendingReason, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			late = strings.HasPrefix(c.name, "late")
			objs := append([]client.Object{cm, mk()}, c.clusters...)
			r := &FirstBootAddonReconciler{Client: fakeClient(t, objs...), Workloads: c.workloads}
			got, res := reconcileOne(t, r, "m")
			require.Equal(t, "sha256:"+digest, got.Status.Digest)
			require.Equal(t, "ConfigMap src", got.Status.Source)
			cond := meta.FindStatusCondition(got.Status.Conditions, addonsv1.AppliedCondition)
			require.NotNil(t, cond)
			require.Equal(t, c.applied, cond.Status, cond.Message)
			require.Equal(t, c.reason, cond.Reason)
			require.Equal(t, c.requeue, res.RequeueAfter > 0)
			if c.phase == "" {
				require.Empty(t, got.Status.Clusters)
				return
			}
			require.Len(t, got.Status.Clusters, 1)
			require.Equal(t, c.phase, got.Status.Clusters[0].Phase, got.Status.Clusters[0].Message)
			require.Equal(t, "sha256:"+digest, got.Status.Clusters[0].Digest)
		})
	}
}

// TestURLCredentialsStayOutOfStatus: a presigned URL's query, its fragment
// and userinfo appear nowhere in the status, whether the status comes from
// the spec (source, an invalid URL) or from the node's record (a result an
// older apply step wrote with the full URL).
func TestURLCredentialsStayOutOfStatus(t *testing.T) {
	const token = "s3cr3tSignature"
	presigned := "https://user:" + token + "@bucket.example.com/cni.yaml?X-Amz-Signature=" + token + "#" + token
	sha := addons.Digest([]byte("x"))
	initialized := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: "default", Labels: map[string]string{"cni": "flannel"}},
		Status: clusterv1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: metav1.ConditionTrue, Reason: "x"}}}}
	record := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: addons.RecordName, Namespace: addons.RecordNamespace},
		Data: map[string]string{"u.sha256": "", "u.result": "failed: cannot fetch " + presigned, "u.version": "-"}}

	t.Run("valid URL", func(t *testing.T) {
		r := &FirstBootAddonReconciler{Client: fakeClient(t, initialized, addon("u", addonsv1.FirstBootAddonSpec{URL: &addonsv1.URLSource{URL: presigned, SHA256: sha}})),
			Workloads: fakeWorkloads{c: fakeClient(t, record)}}
		got, _ := reconcileOne(t, r, "u")
		require.Equal(t, "url https://bucket.example.com/cni.yaml", got.Status.Source)
		require.Len(t, got.Status.Clusters, 1)
		require.Equal(t, addonsv1.AddonFailed, got.Status.Clusters[0].Phase)
		require.Equal(t, "failed: cannot fetch https://bucket.example.com/cni.yaml", got.Status.Clusters[0].Message)
		cond := meta.FindStatusCondition(got.Status.Conditions, addonsv1.AppliedCondition)
		require.Equal(t, "c1: failed: cannot fetch https://bucket.example.com/cni.yaml", cond.Message)
		status, err := json.Marshal(got.Status)
		require.NoError(t, err)
		require.NotContains(t, string(status), token)
	})
	t.Run("invalid URL", func(t *testing.T) {
		bad := "ftp://user:" + token + "@bucket.example.com/cni.yaml?X-Amz-Signature=" + token
		r := &FirstBootAddonReconciler{Client: fakeClient(t, addon("u", addonsv1.FirstBootAddonSpec{URL: &addonsv1.URLSource{URL: bad, SHA256: sha}}))}
		got, _ := reconcileOne(t, r, "u")
		cond := meta.FindStatusCondition(got.Status.Conditions, addonsv1.SourceValidCondition)
		require.Equal(t, `spec.url.url: Invalid value: "ftp://bucket.example.com/cni.yaml": must be an http or https URL`, cond.Message)
		status, err := json.Marshal(got.Status)
		require.NoError(t, err)
		require.NotContains(t, string(status), token)
	})
}

// TestManyClustersFitTheStatus: status.clusters keeps at most the CRD's
// 1,000 entries, failures first, and the Applied condition, within
// metav1.Condition's 32 KiB, still counts every Cluster; a longer list (or
// message) made the API server refuse the whole status write. The failing
// Clusters sort last by name, so a cut without the failures-first order
// would drop them all.
func TestManyClustersFitTheStatus(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "src", Namespace: "default"}, Data: map[string]string{
		"a.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n",
	}}
	objs := []client.Object{cm, addon("m", addonsv1.FirstBootAddonSpec{Manifests: &addonsv1.ManifestsSource{Kind: addonsv1.ManifestsConfigMap, Name: "src"}})}
	const clusters, failing = 1200, 200
	for i := range clusters {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%04d", i), Namespace: "default", Labels: map[string]string{"cni": "flannel"}}}
		c.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: metav1.ConditionTrue, Reason: "x"}}
		objs = append(objs, c)
	}
	record := func(result string) client.Client {
		return fakeClient(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: addons.RecordName, Namespace: addons.RecordNamespace},
			Data: map[string]string{"m.sha256": "00", "m.result": result, "m.version": "-"}})
	}
	applied, failed := record("applied"), record("failed: "+strings.Repeat("x", 300))
	isFailing := func(name string) bool { return name >= fmt.Sprintf("c%04d", clusters-failing) }
	r := &FirstBootAddonReconciler{Client: fakeClient(t, objs...), Workloads: workloadsFunc(func(key client.ObjectKey) client.Client {
		if isFailing(key.Name) {
			return failed
		}
		return applied
	})}
	got, _ := reconcileOne(t, r, "m")
	require.Equal(t, 1000, len(got.Status.Clusters))
	var kept []string
	for _, c := range got.Status.Clusters {
		if c.Phase == addonsv1.AddonFailed {
			require.True(t, isFailing(c.Name), c.Name)
			kept = append(kept, c.Name)
		}
	}
	require.Len(t, kept, failing, "every failing Cluster is kept")
	cond := meta.FindStatusCondition(got.Status.Conditions, addonsv1.AppliedCondition)
	require.NotNil(t, cond)
	require.Equal(t, addonsv1.ApplyFailedReason, cond.Reason)
	require.LessOrEqual(t, len(cond.Message), 32768)
	require.True(t, utf8.ValidString(cond.Message))
}

// workloadsFunc serves each Cluster's workload client.
type workloadsFunc func(client.ObjectKey) client.Client

func (f workloadsFunc) GetUncachedClient(_ context.Context, key client.ObjectKey) (client.Client, error) {
	return f(key), nil
}
