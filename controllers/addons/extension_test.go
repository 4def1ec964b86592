package addons

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	"github.com/nodeboot/nodeboot/addons"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// extensionHooks is the method set the KubeadmConfig reconciler expects
// (controllers.Extension); asserted here so the packages stay decoupled.
var _ interface {
	MutateConfig(ctxT, clusterT, configT) error
	MutatePlan(ctxT, clusterT, configT, resultT) error
} = (*Extension)(nil)

// TestNoAddonIsCABPKIdentical: with add-ons in the namespace that select
// other Clusters, every vector, cloud-config and Ignition alike, still renders
// byte for byte as CABPK did, and the extension's size budget and
// compression are not applied to it.
func TestNoAddonIsCABPKIdentical(t *testing.T) {
	other := builtinAddon("cni", addonsv1.BuiltinFlannel, 0)
	dns := builtinAddon("dns", addonsv1.BuiltinNodeLocalDNS, 1, func(a *addonsv1.FirstBootAddon) {
		a.Spec.Builtin.NodeLocalDNS = &addonsv1.NodeLocalDNSParameters{KubeProxyMode: addonsv1.KubeProxyIPVS}
	})
	ext := NewExtension(fakeClient(t, other, dns), ExtensionOptions{MaxBytes: 16384, Compress: true})
	dirs := append(testenv.Vectors(t, "cc-"), testenv.Vectors(t, "ign-")...)
	require.GreaterOrEqual(t, len(dirs), 20, "all 20 reference vectors")
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in := vectorInput(t, dir)
			res, err := buildWith(t, ext, in)
			require.NoError(t, err)
			require.False(t, res.Options.Compress, "no add-on selects the Cluster: its data must not be compressed")
			require.Zero(t, res.Options.MaxBytes, "no add-on selects the Cluster: no size budget applies")
			want, err := os.ReadFile(filepath.Join(dir, "bootstrap-data"))
			require.NoError(t, err)
			wantFormat, err := os.ReadFile(filepath.Join(dir, "format"))
			require.NoError(t, err)
			out, err := res.Render()
			require.NoError(t, err)
			require.Equal(t, string(wantFormat), out.Format)
			if !bytes.Equal(want, out.Data) {
				require.Equal(t, string(want), string(out.Data))
			}
		})
	}
}

func TestInitGetsAddonsJoinsDoNot(t *testing.T) {
	objs := []clientObject{
		builtinAddon("cni", addonsv1.BuiltinFlannel, 0),
		builtinAddon("dns", addonsv1.BuiltinNodeLocalDNS, 1),
	}
	ext := NewExtension(fakeClient(t, objs...), ExtensionOptions{MaxBytes: 16384, Compress: true})
	for _, dir := range testenv.Vectors(t, "cc-") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			plain := vectorInput(t, dir)
			base, err := buildWith(t, NewExtension(fakeClient(t), ExtensionOptions{}), plain)
			require.NoError(t, err)
			in := vectorInput(t, dir)
			labelCluster(in)
			res, err := buildWith(t, ext, in)
			require.NoError(t, err)
			if base.Plan.Role != provisioning.RoleInit {
				require.Equal(t, base.Plan, res.Plan, "a joining node's plan must not change")
				return
			}
			var paths []string
			for _, f := range res.Plan.Files[len(base.Plan.Files):] {
				paths = append(paths, f.Path)
			}
			require.Equal(t, []string{
				"/etc/kubernetes/addons/000-cni.yaml",
				"/etc/kubernetes/addons/001-dns.yaml",
				"/etc/kubernetes/addons/addons.list",
				"/etc/kubernetes/addons/apply.sh",
			}, paths)
			require.Equal(t, base.Plan.Files, res.Plan.Files[:len(base.Plan.Files)])
			require.True(t, res.Options.Compress)
			require.Equal(t, 16384, res.Options.MaxBytes)
			out, err := res.Render()
			require.NoError(t, err)
			baseOut, err := base.Render()
			require.NoError(t, err)
			require.Equal(t, baseOut.Warnings, out.Warnings, "add-ons must add no cloud-init hazard")
		})
	}
}

func TestIPVSSetsKubeletClusterDNSOnEveryNode(t *testing.T) {
	dns := builtinAddon("dns", addonsv1.BuiltinNodeLocalDNS, 1, func(a *addonsv1.FirstBootAddon) {
		a.Spec.Builtin.NodeLocalDNS = &addonsv1.NodeLocalDNSParameters{KubeProxyMode: addonsv1.KubeProxyIPVS}
	})
	ext := NewExtension(fakeClient(t, dns), ExtensionOptions{})
	for _, dir := range testenv.Vectors(t, "cc-") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in := vectorInput(t, dir)
			labelCluster(in)
			res, err := buildWith(t, ext, in)
			require.NoError(t, err)
			var kubeadmFile string
			for _, f := range res.Plan.Files {
				if f.BootstrapInput {
					kubeadmFile = f.Content
				}
			}
			require.Equal(t, "169.254.20.10", kubeletArg(t, kubeadmFile, "cluster-dns"), kubeadmFile)
			if res.Plan.Role != provisioning.RoleInit {
				for _, f := range res.Plan.Files {
					require.False(t, strings.HasPrefix(f.Path, addons.DefaultDir), f.Path)
				}
			}
		})
	}
}

// TestLateNodeLocalDNSLeavesKubeletAlone: a NodeLocal DNSCache add-on the
// first control-plane node's data did not carry is never applied (only that
// data carries add-ons), so new nodes keep the Cluster's DNS service:
// pointing them at the cache's address left their pods without DNS. One it
// carried still sets it. What the data carried is the list of names on its
// Secret (AnnotationCarried) or, for data made without that list, the
// workload cluster's record; only where neither exists does time decide.
func TestLateNodeLocalDNSLeavesKubeletAlone(t *testing.T) {
	initialized := time.Now().Add(-time.Hour).Truncate(time.Second)
	const cacheIP = "169.254.20.10"
	for _, c := range []struct {
		name    string
		created time.Time
		// carried, when not nil, is AnnotationCarried on the init node's
		// data Secret; own puts it on the joining config's own Secret.
		carried *string
		own     bool
		record  map[string]string
		want    string
	}{
		{"created before the control plane was initialized", initialized.Add(-time.Minute), nil, false, nil, cacheIP},
		{"created after", initialized.Add(time.Minute), nil, false, nil, ""},
		// The init data was built minutes before ControlPlaneInitialized
		// turned True; the add-on was created in between.
		{"created after the init data was built, before the control plane was initialized", initialized.Add(-time.Minute), ptr.To("cni"), false, nil, ""},
		// Deleted and re-created (GitOps), or moved with clusterctl move:
		// the init data carried an add-on of its name.
		{"re-created after, carried by name", initialized.Add(time.Minute), ptr.To("cni,dns"), false, nil, cacheIP},
		{"re-created after, recorded by the node", initialized.Add(time.Minute), nil, false, map[string]string{"dns.result": "applied", "dns.sha256": "00"}, cacheIP},
		// A config's own data, being built again, is not the init data of
		// another node.
		{"created after, listed only on the config's own data", initialized.Add(time.Minute), ptr.To("dns"), true, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := vectorInput(t, filepath.Join(testenv.VectorsDir(t), "cc-join-cp-minimal-v1.33"))
			labelCluster(in)
			// The vector's Cluster was initialized on 1 January 2025.
			conditions.Delete(in.Cluster, clusterv1.ClusterControlPlaneInitializedCondition)
			conditions.Set(in.Cluster, metav1.Condition{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: metav1.ConditionTrue, Reason: "Initialized", LastTransitionTime: metav1.NewTime(initialized)})
			dns := builtinAddon("dns", addonsv1.BuiltinNodeLocalDNS, 1, func(a *addonsv1.FirstBootAddon) {
				a.Spec.Builtin.NodeLocalDNS = &addonsv1.NodeLocalDNSParameters{KubeProxyMode: addonsv1.KubeProxyIPVS}
				a.CreationTimestamp = metav1.NewTime(c.created)
			})
			objs := []clientObject{dns}
			if c.carried != nil {
				name := "init-config"
				if c.own {
					name = in.Config.Name
				}
				objs = append(objs, dataSecret(in.Cluster, name, *c.carried))
			}
			opts := ExtensionOptions{}
			if c.record != nil {
				opts.Workloads = fakeWorkloads{c: fakeClient(t, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: addons.RecordName, Namespace: addons.RecordNamespace}, Data: c.record})}
			}
			res, err := buildWith(t, NewExtension(fakeClient(t, objs...), opts), in)
			require.NoError(t, err)
			for _, f := range res.Plan.Files {
				if f.BootstrapInput {
					require.Equal(t, c.want, kubeletArg(t, f.Content, "cluster-dns"), f.Content)
				}
			}
		})
	}
}

// TestInitDataRecordsTheAddonsItCarries: the init node's data names its
// add-ons, sorted, on its Secret; a joining node's data and a Cluster no
// add-on selects get no annotation.
func TestInitDataRecordsTheAddonsItCarries(t *testing.T) {
	ext := NewExtension(fakeClient(t, builtinAddon("dns", addonsv1.BuiltinNodeLocalDNS, 0), builtinAddon("cni", addonsv1.BuiltinFlannel, 1)), ExtensionOptions{})
	for _, c := range []struct {
		vector string
		label  bool
		want   map[string]string
	}{
		{"cc-init-minimal-v1.33", true, map[string]string{AnnotationCarried: "cni,dns"}},
		{"cc-init-minimal-v1.33", false, nil},
		{"cc-join-cp-minimal-v1.33", true, nil},
	} {
		in := vectorInput(t, filepath.Join(testenv.VectorsDir(t), c.vector))
		if c.label {
			labelCluster(in)
		}
		res, err := buildWith(t, ext, in)
		require.NoError(t, err)
		require.Equal(t, c.want, res.DataAnnotations, "%s, selected: %v", c.vector, c.label)
	}
}

// dataSecret is a bootstrap data Secret of the Cluster, as the KubeadmConfig
// reconciler writes it, whose data carried the add-ons named in carried.
func dataSecret(cluster *clusterv1.Cluster, config, carried string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: config, Namespace: cluster.Namespace,
			Labels:      map[string]string{clusterv1.ClusterNameLabel: cluster.Name},
			Annotations: map[string]string{AnnotationCarried: carried},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig", Name: config, UID: "uid-" + types.UID(config), Controller: ptr.To(true),
			}},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")},
	}
}

func TestIPVSConflictsWithUserClusterDNS(t *testing.T) {
	dns := builtinAddon("dns", addonsv1.BuiltinNodeLocalDNS, 1, func(a *addonsv1.FirstBootAddon) {
		a.Spec.Builtin.NodeLocalDNS = &addonsv1.NodeLocalDNSParameters{KubeProxyMode: addonsv1.KubeProxyIPVS}
	})
	ext := NewExtension(fakeClient(t, dns), ExtensionOptions{})
	in := vectorInput(t, testenv.Vectors(t, "cc-join-worker-minimal")[0])
	labelCluster(in)
	in.Config.Spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "cluster-dns", Value: ptr.To("10.96.0.10")}}
	_, err := buildWith(t, ext, in)
	require.Error(t, err)
	require.True(t, errors.Is(err, reconcile.TerminalError(nil)))
	require.Contains(t, err.Error(), "spec.joinConfiguration.nodeRegistration.kubeletExtraArgs[name=cluster-dns]")
	var invalid *bootstrap.InvalidError
	require.True(t, errors.As(err, &invalid), "the conflict must reach the KubeadmConfig's condition")
	require.Len(t, invalid.Problems, 1)
	require.Equal(t, "KubeadmConfig "+in.Config.Namespace+"/"+in.Config.Name, invalid.Problems[0].Object.String())
	require.Equal(t, "spec.joinConfiguration.nodeRegistration.kubeletExtraArgs[name=cluster-dns]", invalid.Problems[0].Path.String())

	// The same value the add-on needs is accepted and not duplicated.
	in = vectorInput(t, testenv.Vectors(t, "cc-join-worker-minimal")[0])
	labelCluster(in)
	in.Config.Spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "cluster-dns", Value: ptr.To("169.254.20.10")}}
	require.NoError(t, ext.MutateConfig(t.Context(), in.Cluster, in.Config))
	require.NoError(t, ext.MutateConfig(t.Context(), in.Cluster, in.Config))
	require.Len(t, in.Config.Spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs, 1)
}

func TestMutatePlanErrors(t *testing.T) {
	in := vectorInput(t, testenv.Vectors(t, "cc-init-minimal")[0])
	labelCluster(in)
	t.Run("missing ConfigMap is retryable", func(t *testing.T) {
		a := builtinAddon("m", "", 0, func(a *addonsv1.FirstBootAddon) {
			a.Spec.Builtin = nil
			a.Spec.Manifests = &addonsv1.ManifestsSource{Kind: addonsv1.ManifestsConfigMap, Name: "nope"}
		})
		_, err := buildWith(t, NewExtension(fakeClient(t, a), ExtensionOptions{}), vectorInputCopy(in))
		require.ErrorIs(t, err, ErrSourceNotFound)
		require.False(t, errors.Is(err, reconcile.TerminalError(nil)))
		require.Contains(t, err.Error(), "spec.manifests.name")
		var invalid *bootstrap.InvalidError
		require.False(t, errors.As(err, &invalid), "a missing source may still be created: not invalid input")
	})
	t.Run("unknown builtin is terminal", func(t *testing.T) {
		a := builtinAddon("x", "calico", 0)
		_, err := buildWith(t, NewExtension(fakeClient(t, a), ExtensionOptions{}), vectorInputCopy(in))
		require.True(t, errors.Is(err, reconcile.TerminalError(nil)))
		require.Contains(t, err.Error(), "spec.builtin.name")
		// The KubeadmConfig reconciler reports it like any invalid input.
		var invalid *bootstrap.InvalidError
		require.True(t, errors.As(err, &invalid))
		require.Len(t, invalid.Problems, 1)
		require.Equal(t, bootstrap.ObjectRef{Kind: "FirstBootAddon", Namespace: "default", Name: "x"}, invalid.Problems[0].Object)
		require.Equal(t, `spec.builtin.name: Unsupported value: "calico": supported values: "flannel", "nodelocaldns"`, invalid.Problems[0].Problem.String())
	})
	t.Run("a name the node cannot use names the add-on's field", func(t *testing.T) {
		a := builtinAddon("bad.name", addonsv1.BuiltinFlannel, 0)
		_, err := buildWith(t, NewExtension(fakeClient(t, a), ExtensionOptions{}), vectorInputCopy(in))
		require.True(t, errors.Is(err, reconcile.TerminalError(nil)))
		var invalid *bootstrap.InvalidError
		require.True(t, errors.As(err, &invalid), "%v", err)
		require.Len(t, invalid.Problems, 1)
		require.Equal(t, "FirstBootAddon default/bad.name", invalid.Problems[0].Object.String())
		require.Equal(t, "metadata.name", invalid.Problems[0].Path.String())
	})
	t.Run("flannel without pod CIDR names the Cluster field", func(t *testing.T) {
		c := vectorInputCopy(in)
		c.Cluster.Spec.ClusterNetwork.Pods.CIDRBlocks = nil
		_, err := buildWith(t, NewExtension(fakeClient(t, builtinAddon("cni", addonsv1.BuiltinFlannel, 0)), ExtensionOptions{}), c)
		require.True(t, errors.Is(err, reconcile.TerminalError(nil)))
		require.Contains(t, err.Error(), "spec.clusterNetwork.pods.cidrBlocks[0]")
	})
}

func vectorInputCopy(in *bootstrapInput) *bootstrapInput {
	c := *in
	c.Config = in.Config.DeepCopy()
	c.Cluster = in.Cluster.DeepCopy()
	return &c
}

// kubeletArg reads nodeRegistration.kubeletExtraArgs[name] from the
// Init- or JoinConfiguration of a kubeadm file: a map in kubeadm v1beta3, a
// list of name/value pairs in v1beta4.
func kubeletArg(t *testing.T, kubeadmFile, name string) string {
	t.Helper()
	for _, doc := range strings.Split(kubeadmFile, "\n---") {
		var obj struct {
			Kind             string
			NodeRegistration struct {
				KubeletExtraArgs any `json:"kubeletExtraArgs"`
			} `json:"nodeRegistration"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(strings.TrimPrefix(doc, "---")), &obj))
		if obj.Kind != "InitConfiguration" && obj.Kind != "JoinConfiguration" {
			continue
		}
		switch args := obj.NodeRegistration.KubeletExtraArgs.(type) {
		case map[string]any:
			v, _ := args[name].(string)
			return v
		case []any:
			for _, a := range args {
				if m, _ := a.(map[string]any); m["name"] == name {
					v, _ := m["value"].(string)
					return v
				}
			}
		}
	}
	return ""
}
