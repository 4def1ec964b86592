package controllers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
)

// TestCacheTransforms: what the reconcilers read of a Machine, MachinePool
// and Cluster survives the cache transforms (metadata, spec, node
// references, the Cluster's status); what they never read is gone.
func TestCacheTransforms(t *testing.T) {
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: "m", Namespace: "ns", UID: "u", ResourceVersion: "7",
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "c", clusterv1.WatchLabel: "shard-a"},
			Annotations:     map[string]string{corev1.LastAppliedConfigAnnotation: `{"huge":"copy"}`, "keep": "me"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "MachineSet", Name: "ms", UID: "o"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		}
	}
	wantMeta := meta()
	wantMeta.Annotations = map[string]string{"keep": "me"}
	wantMeta.ManagedFields = nil
	spec := clusterv1.MachineSpec{ClusterName: "c", Version: "v1.33.4", Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: "m"}}}
	conditions := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.NewTime(time.Unix(1, 0))}}
	nodeRef := clusterv1.MachineNodeReference{Name: "node-0"}

	machine := &clusterv1.Machine{ObjectMeta: meta(), Spec: spec, Status: clusterv1.MachineStatus{NodeRef: nodeRef, Conditions: conditions, Phase: "Running", Addresses: clusterv1.MachineAddresses{{Type: "InternalIP", Address: "10.0.0.1"}}}}
	got, err := stripMachine(machine)
	if err != nil {
		t.Fatal(err)
	}
	want := &clusterv1.Machine{ObjectMeta: wantMeta, Spec: spec, Status: clusterv1.MachineStatus{NodeRef: nodeRef}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Machine (-want +got):\n%s", d)
	}

	refs := []corev1.ObjectReference{{Kind: "Node", Name: "node-0"}}
	pool := &clusterv1.MachinePool{ObjectMeta: meta(), Spec: clusterv1.MachinePoolSpec{ClusterName: "c", Replicas: ptr.To[int32](1), Template: clusterv1.MachineTemplateSpec{Spec: spec}}, Status: clusterv1.MachinePoolStatus{NodeRefs: refs, Conditions: conditions, Replicas: ptr.To[int32](1)}}
	got, err = stripMachinePool(pool)
	if err != nil {
		t.Fatal(err)
	}
	wantPool := &clusterv1.MachinePool{ObjectMeta: wantMeta, Spec: pool.Spec, Status: clusterv1.MachinePoolStatus{NodeRefs: refs}}
	if d := cmp.Diff(wantPool, got); d != "" {
		t.Errorf("MachinePool (-want +got):\n%s", d)
	}

	status := clusterv1.ClusterStatus{Conditions: conditions, Initialization: clusterv1.ClusterInitializationStatus{InfrastructureProvisioned: ptr.To(true), ControlPlaneInitialized: ptr.To(true)}}
	cluster := &clusterv1.Cluster{ObjectMeta: meta(), Spec: clusterv1.ClusterSpec{ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "10.0.0.100", Port: 6443}}, Status: status}
	got, err = stripMetadata(cluster)
	if err != nil {
		t.Fatal(err)
	}
	wantCluster := &clusterv1.Cluster{ObjectMeta: wantMeta, Spec: cluster.Spec, Status: status}
	if d := cmp.Diff(wantCluster, got); d != "" {
		t.Errorf("Cluster (-want +got):\n%s", d)
	}

	// Objects without annotations stay without (no empty map appears).
	bare := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	if got, _ := stripMetadata(bare); got.(*clusterv1.Cluster).Annotations != nil {
		t.Errorf("annotations appeared on a Cluster without any")
	}
}

// TestSecretAndConfigTransforms: the manager's cache options keep
// certificates and kubeconfigs whole (as CABPK's), bootstrap data Secrets
// down to what is read of them (name, owner), and KubeadmConfig metadata
// without owner references.
func TestSecretAndConfigTransforms(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	opts := ManagerCacheOptions(scheme, "test", "", time.Minute)
	var secretOpts, configOpts *ctrlcache.ByObject
	for obj, o := range opts.ByObject {
		switch obj := obj.(type) {
		case *corev1.Secret:
			if secretOpts != nil {
				t.Fatal("two cache entries for Secrets: which one the cache uses is up to map order")
			}
			secretOpts = &o
		case *metav1.PartialObjectMetadata:
			if obj.Kind == "KubeadmConfig" {
				configOpts = &o
			}
		}
	}
	if secretOpts == nil || configOpts == nil {
		t.Fatalf("cache options for Secrets (%v) or KubeadmConfig metadata (%v) missing", secretOpts != nil, configOpts != nil)
	}
	if secretOpts.Label == nil || secretOpts.Label.String() != clusterv1.ClusterNameLabel {
		t.Errorf("Secret label selector %v, want CABPK's %q", secretOpts.Label, clusterv1.ClusterNameLabel)
	}
	owner := []metav1.OwnerReference{{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig", Name: "w", UID: "u"}}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: name, Namespace: "ns", UID: "s", ResourceVersion: "3",
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "c"},
			Annotations:     map[string]string{"a": "b"},
			OwnerReferences: owner,
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "nodeboot"}},
		}
	}
	data := map[string][]byte{"value": []byte("#cloud-config"), "format": []byte("cloud-config")}

	got, err := secretOpts.Transform(&corev1.Secret{ObjectMeta: meta("w"), Data: data, Type: clusterv1.ClusterSecretType})
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", UID: "s", ResourceVersion: "3", OwnerReferences: owner}, Type: clusterv1.ClusterSecretType}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("bootstrap data Secret (-want +got):\n%s", d)
	}

	got, err = secretOpts.Transform(&corev1.Secret{ObjectMeta: meta("c-kubeconfig"), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	wantMeta := meta("c-kubeconfig")
	wantMeta.ManagedFields = nil
	if d := cmp.Diff(&corev1.Secret{ObjectMeta: wantMeta, Data: data}, got); d != "" {
		t.Errorf("kubeconfig Secret (-want +got):\n%s", d)
	}

	cm := configMetadata()
	cm.ObjectMeta = meta("w")
	got, err = configOpts.Transform(cm)
	if err != nil {
		t.Fatal(err)
	}
	wantConfig := configMetadata()
	wantConfig.ObjectMeta = meta("w")
	wantConfig.OwnerReferences, wantConfig.ManagedFields = nil, nil
	if d := cmp.Diff(wantConfig, got); d != "" {
		t.Errorf("KubeadmConfig metadata (-want +got):\n%s", d)
	}
}
