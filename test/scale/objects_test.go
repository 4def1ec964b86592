package scale_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/kubeconfig"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const k8sVersion = "v1.33.4"

// fleet describes the Clusters of one run, all in one namespace.
type fleet struct {
	ns       string
	clusters int
	workers  int // worker Machines per Cluster
	// ignition makes some configs format: ignition (CABPK's legacy
	// Ignition), the joining control plane of every odd Cluster and every
	// fourth worker, so both of CABPK's formats are in the fleet; the
	// managers need the KubeadmBootstrapFormatIgnition feature gate.
	ignition bool
	// labels go on every object of cluster i (the watch-filter shard).
	labels func(i int) map[string]string
	// workload is the identity the Clusters' kubeconfig Secrets carry: the
	// API server stands in for every workload cluster, and the manager's
	// token writes there are attributed to this user.
	workload *rest.Config
}

func (f fleet) clusterName(i int) string { return fmt.Sprintf("c%02d", i) }

func (f fleet) labelsOf(i int) map[string]string {
	l := map[string]string{clusterv1.ClusterNameLabel: f.clusterName(i)}
	if f.labels != nil {
		for k, v := range f.labels(i) {
			l[k] = v
		}
	}
	return l
}

// machine is one bootstrap consumer: a Machine or the MachinePool.
type machine struct {
	cluster      int
	name         string
	controlPlane bool
	pool         bool
	ignition     bool
}

// machines lists every consumer: per Cluster one joining control-plane
// Machine and the workers; Cluster 0 also has a MachinePool.
func (f fleet) machines() []machine {
	var out []machine
	for c := range f.clusters {
		out = append(out, machine{cluster: c, name: f.clusterName(c) + "-cp-0", controlPlane: true, ignition: f.ignition && c%2 == 1})
		for w := range f.workers {
			out = append(out, machine{cluster: c, name: fmt.Sprintf("%s-md-%03d", f.clusterName(c), w), ignition: f.ignition && w%4 == 3})
		}
	}
	out = append(out, machine{cluster: 0, name: f.clusterName(0) + "-mp-0", pool: true})
	return out
}

// parallel runs fn over items with n goroutines; the first error fails tb.
func parallel[T any](tb testing.TB, n int, items []T, fn func(T) error) {
	tb.Helper()
	work := make(chan T)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				if err := fn(it); err != nil {
					errs <- err
					for range work {
					}
					return
				}
			}
		}()
	}
	for _, it := range items {
		work <- it
	}
	close(work)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		tb.Fatal(err)
	}
}

// createClusters creates the namespace and each Cluster with provisioned
// infrastructure and an initialized control plane, its certificates (the
// vectors' fixed ones) and a kubeconfig Secret for its workload cluster.
func (f fleet) createClusters(tb testing.TB, k8s client.Client) {
	tb.Helper()
	ctx := context.Background()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		tb.Fatal(err)
	}
	idx := make([]int, f.clusters)
	certs := make([][]*corev1.Secret, f.clusters)
	for i := range idx {
		idx[i] = i
		// Read here, not in the workers: a tb.Fatal there would leave
		// parallel waiting for workers that are gone.
		certs[i] = certSecrets(tb, f.ns, f.clusterName(i))
	}
	parallel(tb, 8, idx, func(i int) error {
		name := f.clusterName(i)
		c := &clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: f.labels0(i)},
			Spec: clusterv1.ClusterSpec{
				ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "10.0.0.100", Port: 6443},
				InfrastructureRef:    clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerCluster", Name: name},
			},
		}
		if err := k8s.Create(ctx, c); err != nil {
			return err
		}
		c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		c.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		c.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: metav1.ConditionTrue, Reason: "Initialized", LastTransitionTime: metav1.Now()}}
		if err := k8s.Status().Update(ctx, c); err != nil {
			return err
		}
		for _, s := range certs[i] {
			if err := k8s.Create(ctx, s); err != nil {
				return err
			}
		}
		return k8s.Create(ctx, kubeconfig.GenerateSecret(c, kubeconfig.FromEnvTestConfig(f.workload, c)))
	})
}

// labels0 are a Cluster's own labels: only the shard's, as a user sets them.
func (f fleet) labels0(i int) map[string]string {
	if f.labels == nil {
		return nil
	}
	return f.labels(i)
}

// configSpec is a node's KubeadmConfig spec: a file, a user and a command,
// as Cluster API's quick-start templates carry, in cloud-config or legacy
// Ignition.
func configSpec(controlPlane, ignition bool) bootstrapv1.KubeadmConfigSpec {
	spec := bootstrapv1.KubeadmConfigSpec{
		Files:              []bootstrapv1.File{{Path: "/etc/motd", Content: "welcome", Permissions: "0644", Owner: "root:root"}},
		PreKubeadmCommands: []string{"echo pre"},
		Users:              []bootstrapv1.User{{Name: "ops", SSHAuthorizedKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops"}}},
	}
	if ignition {
		spec.Format = bootstrapv1.Ignition
	}
	spec.JoinConfiguration.NodeRegistration.Name = "{{ ds.meta_data.local_hostname }}"
	spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "cloud-provider", Value: ptr.To("external")}}
	if controlPlane {
		spec.JoinConfiguration.ControlPlane = &bootstrapv1.JoinControlPlane{}
	}
	return spec
}

// placeholderUID stands for the owner's UID before the owner exists: the
// reconcilers find owners by kind and name.
func placeholderUID(i int) types.UID {
	return types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
}

// createConfig creates m's KubeadmConfig, owned (by name) by a Machine or
// MachinePool that does not exist yet — as a MachineSet or MachinePool
// controller leaves it between cloning the template and creating the owner.
func (f fleet) createConfig(ctx context.Context, k8s client.Client, m machine, i int) error {
	kind := "Machine"
	if m.pool {
		kind = "MachinePool"
	}
	c := &bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{
			Name: m.name, Namespace: f.ns, Labels: f.labelsOf(m.cluster),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: m.name, UID: placeholderUID(i)}},
		},
		Spec: configSpec(m.controlPlane, m.ignition),
	}
	return k8s.Create(ctx, c)
}

// createOwner creates m's Machine or MachinePool.
func (f fleet) createOwner(ctx context.Context, k8s client.Client, m machine) error {
	cluster := f.clusterName(m.cluster)
	spec := clusterv1.MachineSpec{
		ClusterName:       cluster,
		Version:           k8sVersion,
		Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: m.name}},
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachine", Name: m.name},
	}
	labels := f.labelsOf(m.cluster)
	if m.pool {
		spec.InfrastructureRef.Kind = "DockerMachinePool"
		return k8s.Create(ctx, &clusterv1.MachinePool{
			ObjectMeta: metav1.ObjectMeta{Name: m.name, Namespace: f.ns, Labels: labels},
			Spec:       clusterv1.MachinePoolSpec{ClusterName: cluster, Replicas: ptr.To[int32](3), Template: clusterv1.MachineTemplateSpec{Spec: spec}},
		})
	}
	if m.controlPlane {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	return k8s.Create(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: m.name, Namespace: f.ns, Labels: labels}, Spec: spec})
}

// dataSecretCreated reports whether the config's status says its Secret exists.
func dataSecretCreated(c *bootstrapv1.KubeadmConfig) bool {
	return ptr.Deref(c.Status.Initialization.DataSecretCreated, false) && c.Status.DataSecretName != ""
}
