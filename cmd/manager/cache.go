package main

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/setup"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// lastApplied is kubectl's copy of the whole applied object: on a Cluster
// or Machine applied with kubectl it can be as large as the object itself,
// and nothing here reads it.
const lastApplied = corev1.LastAppliedConfigAnnotation

// managerCacheOptions are CABPK's cache options (setup.ManagerCacheOptions:
// managed fields stripped, only Secrets with the cluster-name label cached
// and those without their data unless they are certificates or
// kubeconfigs, MachineSets reduced to their owner references), narrowed
// further for the kinds the reconcilers only read and never write: Machines
// and MachinePools keep their metadata, spec and node references (the only
// status fields read: has the node joined), Clusters keep spec and status.
// kubectl's last-applied copy is dropped from all three.
//
// KubeadmConfigs are cached whole: the reconciler patches them, and a patch
// is computed against what was read. Cached reads keep their deep copy: the
// reconcilers and Cluster API's helpers mutate what they get.
func managerCacheOptions(scheme *runtime.Scheme, controllerName, namespace string, syncPeriod time.Duration) ctrlcache.Options {
	opts := setup.ManagerCacheOptions(scheme, controllerName, namespace, syncPeriod)
	opts.ByObject[&clusterv1.Machine{}] = ctrlcache.ByObject{Transform: stripMachine}
	opts.ByObject[&clusterv1.MachinePool{}] = ctrlcache.ByObject{Transform: stripMachinePool}
	opts.ByObject[&clusterv1.Cluster{}] = ctrlcache.ByObject{Transform: stripMetadata}
	return opts
}

// stripMetadata drops managed fields and the last-applied annotation.
func stripMetadata(in any) (any, error) {
	if o, ok := in.(client.Object); ok {
		o.SetManagedFields(nil)
		if a := o.GetAnnotations(); a != nil {
			if _, ok := a[lastApplied]; ok {
				delete(a, lastApplied)
				o.SetAnnotations(a)
			}
		}
	}
	return in, nil
}

func stripMachine(in any) (any, error) {
	if m, ok := in.(*clusterv1.Machine); ok {
		m.Status = clusterv1.MachineStatus{NodeRef: m.Status.NodeRef}
	}
	return stripMetadata(in)
}

func stripMachinePool(in any) (any, error) {
	if mp, ok := in.(*clusterv1.MachinePool); ok {
		mp.Status = clusterv1.MachinePoolStatus{NodeRefs: mp.Status.NodeRefs}
	}
	return stripMetadata(in)
}
