package addons

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/test/testenv"
)

func testScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(s))
	require.NoError(t, clusterv1.AddToScheme(s))
	require.NoError(t, bootstrapv1.AddToScheme(s))
	require.NoError(t, addonsv1.AddToScheme(s))
	return s
}

func fakeClient(t testing.TB, objs ...client.Object) client.WithWatch {
	t.Helper()
	return fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).
		WithStatusSubresource(&addonsv1.FirstBootAddon{}).Build()
}

// vectorInput reads a CABPK reference vector's input.
func vectorInput(t testing.TB, dir string) *bootstrap.Input {
	t.Helper()
	return testenv.VectorInput(t, dir)
}

// buildWith runs the KubeadmConfig reconciler's flow around bootstrap.Build:
// MutateConfig, Build, MutatePlan.
func buildWith(t testing.TB, ext *Extension, in *bootstrap.Input) (*bootstrap.Result, error) {
	t.Helper()
	ctx := context.Background()
	in.Config = in.Config.DeepCopy()
	if err := ext.MutateConfig(ctx, in.Cluster, in.Config); err != nil {
		return nil, err
	}
	res, err := bootstrap.Build(ctx, *in)
	require.NoError(t, err)
	if err := ext.MutatePlan(ctx, in.Cluster, in.Config, res); err != nil {
		return nil, err
	}
	return res, nil
}

func builtinAddon(name, builtin string, order int32, mutate ...func(*addonsv1.FirstBootAddon)) *addonsv1.FirstBootAddon {
	a := &addonsv1.FirstBootAddon{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: addonsv1.FirstBootAddonSpec{
			ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"cni": "flannel"}},
			Builtin:         &addonsv1.BuiltinSource{Name: builtin},
			Order:           order,
		},
	}
	for _, m := range mutate {
		m(a)
	}
	return a
}

func labelCluster(in *bootstrap.Input) {
	if in.Cluster.Labels == nil {
		in.Cluster.Labels = map[string]string{}
	}
	in.Cluster.Labels["cni"] = "flannel"
}
