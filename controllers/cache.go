package controllers

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/setup"
	"sigs.k8s.io/cluster-api/util/secret"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// lastApplied is kubectl's copy of the whole applied object: on a Cluster
// or Machine applied with kubectl it can be as large as the object itself,
// and nothing here reads it.
const lastApplied = corev1.LastAppliedConfigAnnotation

// ManagerCacheOptions are the cache options of the manager that runs the
// Reconciler: they live here, beside what the reconcilers read, because
// each transform keeps exactly that and drops the rest. cmd/manager builds
// its cache with them, and test/controllers holds them to the requests a
// manager built with them makes and to what its cache then holds.
//
// They start from CABPK's (setup.ManagerCacheOptions: managed fields
// stripped, only Secrets with the cluster-name label cached and those
// without their data unless they are certificates or kubeconfigs,
// MachineSets reduced to their owner references) and narrow them further
// for the kinds the reconcilers only read and never write: Machines and
// MachinePools keep their metadata, spec and node references (the only
// status fields read: has the node joined), Clusters keep spec and status.
// kubectl's last-applied copy is dropped from all three. Bootstrap data
// Secrets also lose their labels and annotations.
//
// KubeadmConfigs are cached as metadata only (SetupWithManager watches
// them so), without owner references; Reconcile reads the config whole
// from the API server. Cached reads keep their deep copy: the reconcilers
// and Cluster API's helpers mutate what they get.
func ManagerCacheOptions(scheme *runtime.Scheme, controllerName, namespace string, syncPeriod time.Duration) ctrlcache.Options {
	opts := setup.ManagerCacheOptions(scheme, controllerName, namespace, syncPeriod)
	opts.ByObject[&clusterv1.Machine{}] = ctrlcache.ByObject{Transform: stripMachine}
	opts.ByObject[&clusterv1.MachinePool{}] = ctrlcache.ByObject{Transform: stripMachinePool}
	opts.ByObject[&clusterv1.Cluster{}] = ctrlcache.ByObject{Transform: stripMetadata}
	// ByObject is keyed by pointer: CABPK's Secret entry is found by type.
	for obj, o := range opts.ByObject {
		if _, ok := obj.(*corev1.Secret); ok {
			o.Transform = stripSecret(o.Transform)
			opts.ByObject[obj] = o
		}
	}
	opts.ByObject[configMetadata()] = ctrlcache.ByObject{Transform: stripConfigMetadata}
	return opts
}

// stripConfigMetadata keeps what is read of a cached KubeadmConfig: the
// watch's event filters read labels, Reconcile the UID and resourceVersion
// before it reads the config whole. Owner references are dropped.
func stripConfigMetadata(in any) (any, error) {
	if m, ok := in.(*metav1.PartialObjectMetadata); ok {
		m.OwnerReferences = nil
	}
	return stripMetadata(in)
}

// stripSecret runs CABPK's Secret transform (which drops the data of every
// Secret but certificates and kubeconfigs), then also drops the labels and
// annotations of those data-less Secrets: the bootstrap data Secrets, one
// per config. Only their owner references are read from the cache
// (ensureSecretOwnerRef).
func stripSecret(cabpk toolscache.TransformFunc) toolscache.TransformFunc {
	return func(in any) (any, error) {
		if cabpk != nil {
			var err error
			if in, err = cabpk(in); err != nil {
				return in, err
			}
		}
		if s, ok := in.(*corev1.Secret); ok && !secret.HasPurposeSuffix(s.Name) {
			s.Labels, s.Annotations = nil, nil
		}
		return in, nil
	}
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
