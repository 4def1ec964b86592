package bootstrapdata

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/feature"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Owner is the Machine or MachinePool a KubeadmConfig belongs to: exactly
// one of the two fields is set.
type Owner struct {
	Machine *clusterv1.Machine
	Pool    *clusterv1.MachinePool
}

// GetOwner finds the owner through the config's ownerReferences, as CABPK
// does: the first reference to a Machine (or, with the MachinePool feature,
// a MachinePool), always read at the current API version. It returns nil,
// nil when the config has no such owner yet.
func GetOwner(ctx context.Context, c client.Reader, config *bootstrapv1.KubeadmConfig) (*Owner, error) {
	for _, ref := range config.OwnerReferences {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != clusterv1.GroupVersion.Group {
			continue
		}
		key := client.ObjectKey{Namespace: config.Namespace, Name: ref.Name}
		switch {
		case ref.Kind == "Machine":
			m := &clusterv1.Machine{}
			if err := c.Get(ctx, key, m); err != nil {
				return nil, err
			}
			return &Owner{Machine: m}, nil
		case ref.Kind == "MachinePool" && feature.Gates.Enabled(feature.MachinePool):
			mp := &clusterv1.MachinePool{}
			if err := c.Get(ctx, key, mp); err != nil {
				return nil, err
			}
			return &Owner{Pool: mp}, nil
		}
	}
	return nil, nil
}

// Object is the Machine or the MachinePool.
func (o *Owner) Object() client.Object {
	if o.Pool != nil {
		return o.Pool
	}
	return o.Machine
}

// Kind is "Machine" or "MachinePool".
func (o *Owner) Kind() string {
	if o.Pool != nil {
		return "MachinePool"
	}
	return "Machine"
}

// IsMachinePool tells a MachinePool from a Machine.
func (o *Owner) IsMachinePool() bool { return o.Pool != nil }

// ClusterName is the owner's spec.clusterName.
func (o *Owner) ClusterName() string {
	if o.Pool != nil {
		return o.Pool.Spec.ClusterName
	}
	return o.Machine.Spec.ClusterName
}

// DataSecretName is the owner's spec.bootstrap.dataSecretName.
func (o *Owner) DataSecretName() *string {
	if o.Pool != nil {
		return o.Pool.Spec.Template.Spec.Bootstrap.DataSecretName
	}
	return o.Machine.Spec.Bootstrap.DataSecretName
}

// IsControlPlaneMachine tells a Machine carrying the control-plane label.
func (o *Owner) IsControlPlaneMachine() bool {
	if o.Machine == nil {
		return false
	}
	_, ok := o.Machine.Labels[clusterv1.MachineControlPlaneLabel]
	return ok
}

// HasNodeRefs tells whether every node the owner stands for has joined: the
// Machine's node, or as many MachinePool nodes as replicas (default 1).
func (o *Owner) HasNodeRefs() bool {
	if o.Pool != nil {
		return len(o.Pool.Status.NodeRefs) == int(ptr.Deref(o.Pool.Spec.Replicas, 1))
	}
	return o.Machine.Status.NodeRef.IsDefined()
}
