package addons

import (
	"context"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/controllers"
)

var _ controllers.WatchingExtension = (*Extension)(nil)

// WatchedObject implements controllers.WatchingExtension: a FirstBootAddon
// that is created, fixed or deleted changes the init node's bootstrap data.
func (e *Extension) WatchedObject() client.Object { return &addonsv1.FirstBootAddon{} }

// ClustersFor implements controllers.WatchingExtension: the Clusters in the
// add-on's namespace that its selector matches. An unreadable selector or a
// failed list names no Cluster; the add-on's own status reports the problem.
func (e *Extension) ClustersFor(ctx context.Context, obj client.Object) []client.ObjectKey {
	a, ok := obj.(*addonsv1.FirstBootAddon)
	if !ok {
		return nil
	}
	var clusters clusterv1.ClusterList
	if err := e.resolver.Client.List(ctx, &clusters, client.InNamespace(a.Namespace)); err != nil {
		return nil
	}
	var out []client.ObjectKey
	for i := range clusters.Items {
		if ok, err := Selects(a, &clusters.Items[i]); err == nil && ok {
			out = append(out, client.ObjectKeyFromObject(&clusters.Items[i]))
		}
	}
	return out
}
