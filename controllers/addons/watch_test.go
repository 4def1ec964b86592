package addons

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

func TestClustersForFollowsTheSelector(t *testing.T) {
	cluster := func(ns, name, cni string) *clusterv1.Cluster {
		return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"cni": cni}}}
	}
	addon := &addonsv1.FirstBootAddon{
		ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "cni"},
		Spec: addonsv1.FirstBootAddonSpec{ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"cni": "flannel"}},
			Builtin: &addonsv1.BuiltinSource{Name: "flannel"}},
	}
	c := fakeClient(t, cluster("a", "one", "flannel"), cluster("a", "two", "calico"), cluster("b", "three", "flannel"))
	e := NewExtension(c, ExtensionOptions{})
	require.Equal(t, []client.ObjectKey{{Namespace: "a", Name: "one"}}, e.ClustersFor(context.Background(), addon))
	require.IsType(t, &addonsv1.FirstBootAddon{}, e.WatchedObject())

	addon.Spec.ClusterSelector = metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "cni", Operator: "bogus"}}}
	require.Empty(t, e.ClustersFor(context.Background(), addon), "an unreadable selector names no cluster")
}
