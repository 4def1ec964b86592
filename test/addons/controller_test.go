package addons

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// crdPaths are the generated FirstBootAddon CRD and Cluster API's Cluster CRD.
func crdPaths(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-api").Output()
	require.NoError(t, err)
	return []string{
		filepath.Join(testenv.ModuleRoot(), "config", "crd", "addons"),
		filepath.Join(strings.TrimSpace(string(out)), "core", "config", "crd", "bases", "cluster.x-k8s.io_clusters.yaml"),
	}
}

// sameCluster serves the test API server as every workload cluster.
type sameCluster struct{ c client.Client }

func (s sameCluster) GetUncachedClient(context.Context, client.ObjectKey) (client.Client, error) {
	return s.c, nil
}

// TestSchemaValidation: the generated CRD's schema and CEL rules reject bad
// specs at admission, naming the field.
func TestSchemaValidation(t *testing.T) {
	s := startAPIServer(t, crdPaths(t)...)
	sha := strings.Repeat("a", 64)
	cases := map[string]struct {
		spec addonsv1.FirstBootAddonSpec
		want string
	}{
		"two sources": {addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "flannel"}, URL: &addonsv1.URLSource{URL: "https://h/x", SHA256: sha}},
			"spec: Invalid value: exactly one of builtin, manifests and url must be set"},
		"no source":                      {addonsv1.FirstBootAddonSpec{}, "exactly one of builtin, manifests and url must be set"},
		"bad sha256":                     {addonsv1.FirstBootAddonSpec{URL: &addonsv1.URLSource{URL: "https://h/x", SHA256: "ABC"}}, "spec.url.sha256: Invalid value"},
		"ftp url":                        {addonsv1.FirstBootAddonSpec{URL: &addonsv1.URLSource{URL: "ftp://h/x", SHA256: sha}}, "spec.url.url: Invalid value"},
		"foreign params":                 {addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "flannel", NodeLocalDNS: &addonsv1.NodeLocalDNSParameters{}}}, "spec.builtin.nodeLocalDNS: Invalid value"},
		"bad local IP":                   {addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "nodelocaldns", NodeLocalDNS: &addonsv1.NodeLocalDNSParameters{LocalIP: "x"}}}, "spec.builtin.nodeLocalDNS.localIP: Invalid value"},
		"proxy mode":                     {addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "nodelocaldns", NodeLocalDNS: &addonsv1.NodeLocalDNSParameters{KubeProxyMode: "nft"}}}, "spec.builtin.nodeLocalDNS.kubeProxyMode: Unsupported value"},
		"secret kind":                    {addonsv1.FirstBootAddonSpec{Manifests: &addonsv1.ManifestsSource{Kind: "Pod", Name: "x"}}, "spec.manifests.kind: Unsupported value"},
		"vni":                            {addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "flannel", Flannel: &addonsv1.FlannelParameters{VNI: ptr.To[int32](0)}}}, "spec.builtin.flannel.vni: Invalid value"},
		"image repository with a scheme": {addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "flannel", ImageRepository: "https://mirror.example"}}, "spec.builtin.imageRepository: Invalid value"},
		"image repository with a tag":    {addonsv1.FirstBootAddonSpec{Builtin: &addonsv1.BuiltinSource{Name: "nodelocaldns", ImageRepository: "mirror.example/k8s:v1"}}, "spec.builtin.imageRepository: Invalid value"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			a := &addonsv1.FirstBootAddon{ObjectMeta: metav1.ObjectMeta{GenerateName: "bad-", Namespace: "default"}, Spec: c.spec}
			err := s.client.Create(context.Background(), a)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
		})
	}
	t.Run("missing sha256", func(t *testing.T) {
		// As a user writes it: the key is absent, not empty.
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": addonsv1.GroupVersion.String(), "kind": "FirstBootAddon",
			"metadata": map[string]any{"generateName": "bad-", "namespace": "default"},
			"spec": map[string]any{
				"clusterSelector": map[string]any{"matchLabels": map[string]any{"a": "b"}},
				"url":             map[string]any{"url": "https://h/x.yaml"},
			},
		}}
		err := s.client.Create(context.Background(), u)
		require.Error(t, err)
		require.Contains(t, err.Error(), "spec.url.sha256: Required value")
	})
	t.Run("valid", func(t *testing.T) {
		for _, o := range standardAddons() {
			require.NoError(t, s.client.Create(context.Background(), o))
		}
	})
}

// TestEndToEnd: FirstBootAddons and a Cluster in a real API server; the
// extension reads them to build the init node's cloud-config; the extracted
// apply step applies the add-ons (the same API server stands in for the
// workload cluster); the reconciler then reports them Applied with the digest
// the node verified.
func TestEndToEnd(t *testing.T) {
	s := startAPIServer(t, crdPaths(t)...)
	ctx := context.Background()
	for _, o := range standardAddons() {
		require.NoError(t, s.client.Create(ctx, o))
	}
	in := initInput(t, "cc-init-minimal-v1.33")
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: in.Cluster.Name, Namespace: in.Cluster.Namespace, Labels: in.Cluster.Labels}, Spec: *in.Cluster.Spec.DeepCopy()}
	require.NoError(t, s.client.Create(ctx, cluster))
	cluster.Status.Conditions = in.Cluster.Status.Conditions // not initialized
	require.NoError(t, s.client.Status().Update(ctx, cluster))
	in.Cluster = cluster.DeepCopy()

	ext := addonsctrl.NewExtension(s.client, addonsctrl.ExtensionOptions{Compress: true, MaxBytes: ec2UserDataLimit})
	require.NoError(t, ext.MutateConfig(ctx, in.Cluster, in.Config))
	res, err := bootstrap.Build(ctx, *in)
	require.NoError(t, err)
	require.NoError(t, ext.MutatePlan(ctx, in.Cluster, in.Config, res))
	out, err := res.Render()
	require.NoError(t, err)

	r := &addonsctrl.FirstBootAddonReconciler{Client: s.client, Workloads: sameCluster{s.client}}
	reconcileAll := func() map[string]*addonsv1.FirstBootAddon {
		got := map[string]*addonsv1.FirstBootAddon{}
		for _, name := range []string{"cni", "dns"} {
			_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "default", Name: name}})
			require.NoError(t, err)
			a := &addonsv1.FirstBootAddon{}
			require.NoError(t, s.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, a))
			got[name] = a
		}
		return got
	}
	for _, a := range reconcileAll() {
		require.True(t, meta.IsStatusConditionTrue(a.Status.Conditions, addonsv1.SourceValidCondition))
		require.Equal(t, addonsv1.AddonPending, a.Status.Clusters[0].Phase)
	}

	dir := t.TempDir()
	_, err, _ = s.run(t, applyStep(t, out.Data, dir), s.kubeconfig, 60)
	require.NoError(t, err)
	cluster.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: metav1.ConditionTrue, Reason: "Initialized", LastTransitionTime: metav1.Now()}}
	require.NoError(t, s.client.Status().Update(ctx, cluster))

	idx := index(t, dir)
	for name, a := range reconcileAll() {
		cond := meta.FindStatusCondition(a.Status.Conditions, addonsv1.AppliedCondition)
		require.Equal(t, metav1.ConditionTrue, cond.Status, "%s: %s", name, cond.Message)
		require.Len(t, a.Status.Clusters, 1)
		cs := a.Status.Clusters[0]
		require.Equal(t, addonsv1.ClusterAddonStatus{Name: cluster.Name, Phase: addonsv1.AddonApplied,
			Digest: "sha256:" + idx[name][0], AppliedDigest: "sha256:" + idx[name][0]}, cs)
		require.NotEmpty(t, a.Status.Digest)
		t.Logf("%s: source %q version %s digest %s; cluster %s %s", name, a.Status.Source, a.Status.Version, a.Status.Digest, cs.Name, cs.Phase)
	}
}
