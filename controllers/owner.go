package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/feature"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// configOwner is the Machine or MachinePool a KubeadmConfig belongs to:
// exactly one of the two fields is set.
type configOwner struct {
	machine *clusterv1.Machine
	pool    *clusterv1.MachinePool
}

// getOwner finds the owner through the config's ownerReferences, as CABPK
// does: the first reference to a Machine (or, with the MachinePool feature,
// a MachinePool), always read at the current API version. It returns nil,
// nil when the config has no such owner yet.
func (r *Reconciler) getOwner(ctx context.Context, config *bootstrapv1.KubeadmConfig) (*configOwner, error) {
	for _, ref := range config.OwnerReferences {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != clusterv1.GroupVersion.Group {
			continue
		}
		key := client.ObjectKey{Namespace: config.Namespace, Name: ref.Name}
		switch {
		case ref.Kind == "Machine":
			m := &clusterv1.Machine{}
			if err := r.Client.Get(ctx, key, m); err != nil {
				return nil, err
			}
			return &configOwner{machine: m}, nil
		case ref.Kind == "MachinePool" && feature.Gates.Enabled(feature.MachinePool):
			mp := &clusterv1.MachinePool{}
			if err := r.Client.Get(ctx, key, mp); err != nil {
				return nil, err
			}
			return &configOwner{pool: mp}, nil
		}
	}
	return nil, nil
}

func (o *configOwner) object() client.Object {
	if o.pool != nil {
		return o.pool
	}
	return o.machine
}

func (o *configOwner) kind() string {
	if o.pool != nil {
		return "MachinePool"
	}
	return "Machine"
}

func (o *configOwner) isMachinePool() bool { return o.pool != nil }

func (o *configOwner) clusterName() string {
	if o.pool != nil {
		return o.pool.Spec.ClusterName
	}
	return o.machine.Spec.ClusterName
}

// dataSecretName is the owner's spec.bootstrap.dataSecretName.
func (o *configOwner) dataSecretName() *string {
	if o.pool != nil {
		return o.pool.Spec.Template.Spec.Bootstrap.DataSecretName
	}
	return o.machine.Spec.Bootstrap.DataSecretName
}

func (o *configOwner) isControlPlaneMachine() bool {
	if o.machine == nil {
		return false
	}
	_, ok := o.machine.Labels[clusterv1.MachineControlPlaneLabel]
	return ok
}

// hasNodeRefs tells whether every node the owner stands for has joined: the
// Machine's node, or as many MachinePool nodes as replicas (default 1).
func (o *configOwner) hasNodeRefs() bool {
	if o.pool != nil {
		return len(o.pool.Status.NodeRefs) == int(ptr.Deref(o.pool.Spec.Replicas, 1))
	}
	return o.machine.Status.NodeRef.IsDefined()
}
