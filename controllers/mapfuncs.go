package controllers

import (
	"context"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/feature"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
)

var kubeadmConfigGK = bootstrapv1.GroupVersion.WithKind("KubeadmConfig").GroupKind()

func configRequest(namespace string, ref clusterv1.ContractVersionedObjectReference) []ctrl.Request {
	if !ref.IsDefined() || ref.GroupKind() != kubeadmConfigGK {
		return nil
	}
	return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: namespace, Name: ref.Name}}}
}

// machineToConfig maps a Machine to the KubeadmConfig its bootstrap refers to.
func (r *Reconciler) machineToConfig(_ context.Context, o client.Object) []ctrl.Request {
	m, ok := o.(*clusterv1.Machine)
	if !ok {
		return nil
	}
	return configRequest(m.Namespace, m.Spec.Bootstrap.ConfigRef)
}

// machinePoolToConfig maps a MachinePool to the KubeadmConfig of its template.
func (r *Reconciler) machinePoolToConfig(_ context.Context, o client.Object) []ctrl.Request {
	mp, ok := o.(*clusterv1.MachinePool)
	if !ok {
		return nil
	}
	return configRequest(mp.Namespace, mp.Spec.Template.Spec.Bootstrap.ConfigRef)
}

// clusterToConfigs maps a Cluster to the KubeadmConfigs of all its Machines
// and MachinePools.
func (r *Reconciler) clusterToConfigs(ctx context.Context, o client.Object) []ctrl.Request {
	c, ok := o.(*clusterv1.Cluster)
	if !ok {
		return nil
	}
	selectors := []client.ListOption{client.InNamespace(c.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: c.Name}}
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, selectors...); err != nil {
		return nil
	}
	var out []ctrl.Request
	for i := range machines.Items {
		out = append(out, configRequest(machines.Items[i].Namespace, machines.Items[i].Spec.Bootstrap.ConfigRef)...)
	}
	if feature.Gates.Enabled(feature.MachinePool) {
		pools := &clusterv1.MachinePoolList{}
		if err := r.Client.List(ctx, pools, selectors...); err != nil {
			return nil
		}
		for i := range pools.Items {
			out = append(out, configRequest(pools.Items[i].Namespace, pools.Items[i].Spec.Template.Spec.Bootstrap.ConfigRef)...)
		}
	}
	return out
}

// extensionToConfigs re-reconciles the KubeadmConfigs of every Cluster an
// extension's object affects, so fixing, say, a broken add-on does not wait
// for the next resync.
func (r *Reconciler) extensionToConfigs(w WatchingExtension) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		var out []ctrl.Request
		for _, key := range w.ClustersFor(ctx, o) {
			cluster := &clusterv1.Cluster{}
			cluster.Namespace, cluster.Name = key.Namespace, key.Name
			out = append(out, r.clusterToConfigs(ctx, cluster)...)
		}
		return out
	}
}
