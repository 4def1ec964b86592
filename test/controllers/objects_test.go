package controllers_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/kubeconfig"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/test/testenv"
)

const clusterName = "test-cluster"

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(io.NopCloser(bytes.NewReader(b))) }

// applyInput creates the objects of a vector's input.yaml in namespace ns,
// as a user and Cluster API's core controllers would have: owners first,
// status through the status subresource, owner references pointing at the
// real UIDs. It returns the KubeadmConfig's name.
func applyInput(t testing.TB, ns string, raw []byte) string {
	t.Helper()
	ctx := context.Background()
	rank := map[string]int{"Secret": 0, "KubeadmControlPlane": 1, "KubeadmConfigTemplate": 1, "Cluster": 2, "Machine": 3, "MachinePool": 3, "KubeadmConfig": 4}
	docs := decodeDocs(t, raw)
	sort.SliceStable(docs, func(i, j int) bool {
		return rank[docs[i]["kind"].(string)] < rank[docs[j]["kind"].(string)]
	})
	uids := map[string]types.UID{}
	configName := ""
	for _, doc := range docs {
		u := &unstructured.Unstructured{Object: doc}
		kind := u.GetKind()
		status, hasStatus := doc["status"]
		delete(doc, "status")
		u.SetNamespace(ns)
		u.SetUID("")
		u.SetResourceVersion("")
		if kind == "KubeadmConfig" {
			refs := u.GetOwnerReferences()
			for i := range refs {
				refs[i].UID = uids[refs[i].Kind+"/"+refs[i].Name]
			}
			u.SetOwnerReferences(refs)
			configName = u.GetName()
			hasStatus = false
		}
		if err := k8s.Create(ctx, u); err != nil {
			t.Fatalf("create %s %s: %v", kind, u.GetName(), err)
		}
		uids[kind+"/"+u.GetName()] = u.GetUID()
		if hasStatus && (kind == "Cluster" || kind == "Machine" || kind == "MachinePool") {
			u.Object["status"] = status
			if err := k8s.Status().Update(ctx, u); err != nil {
				t.Fatalf("update status of %s %s: %v", kind, u.GetName(), err)
			}
		}
	}
	return configName
}

// certSecrets are the fixed cluster certificates of the reference vectors.
func certSecrets(t testing.TB) []*corev1.Secret {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.VectorsDir(t), "cc-join-cp-minimal-v1.33", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*corev1.Secret
	for _, doc := range decodeDocs(t, raw) {
		if doc["kind"] != "Secret" {
			continue
		}
		s := &corev1.Secret{}
		if err := runtimeFromMap(doc, s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if len(out) < 4 {
		t.Fatalf("expected the four cluster certificate Secrets, found %d", len(out))
	}
	return out
}

func runtimeFromMap(m map[string]any, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, into)
}

// clusterOptions describe a test Cluster.
type clusterOptions struct {
	initialized bool
	certs       bool // pre-create the fixed certificates
	kubeconfig  bool // a kubeconfig Secret pointing at envtest: the workload cluster
	labels      map[string]string
	network     clusterv1.ClusterNetwork
}

// createCluster creates test-cluster in ns with provisioned infrastructure.
func createCluster(t testing.TB, ns string, o clusterOptions) *clusterv1.Cluster {
	t.Helper()
	ctx := context.Background()
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: clusterName, Namespace: ns, Labels: o.labels},
		Spec: clusterv1.ClusterSpec{
			ClusterNetwork:       o.network,
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "10.0.0.100", Port: 6443},
			InfrastructureRef:    clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerCluster", Name: clusterName},
		},
	}
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	status := metav1.ConditionFalse
	reason := "WaitingForControlPlane"
	if o.initialized {
		status, reason = metav1.ConditionTrue, "Initialized"
	}
	c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	c.Status.Initialization.ControlPlaneInitialized = ptr.To(o.initialized)
	c.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: status, Reason: reason, LastTransitionTime: metav1.Now()}}
	if err := k8s.Status().Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	if o.certs {
		for _, s := range certSecrets(t) {
			s.Namespace, s.ResourceVersion, s.UID = ns, "", ""
			if err := k8s.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if o.kubeconfig {
		if err := k8s.Create(ctx, kubeconfig.GenerateSecret(c, kubeconfig.FromEnvTestConfig(cfg, c))); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// role of a test machine.
type role int

const (
	controlPlane role = iota
	worker
)

// testSpec is a KubeadmConfig spec exercising files, users and commands.
func testSpec(r role, initialized bool) bootstrapv1.KubeadmConfigSpec {
	spec := bootstrapv1.KubeadmConfigSpec{
		Files:              []bootstrapv1.File{{Path: "/etc/motd", Content: "welcome", Permissions: "0644", Owner: "root:root"}},
		PreKubeadmCommands: []string{"echo pre"},
		Users:              []bootstrapv1.User{{Name: "ops", Passwd: "s3cr3t-passwd-never-logged", LockPassword: ptr.To(false)}},
	}
	switch {
	case r == controlPlane && !initialized:
		spec.ClusterConfiguration.APIServer.ExtraArgs = []bootstrapv1.Arg{{Name: "v", Value: ptr.To("2")}}
		spec.InitConfiguration.NodeRegistration.Name = "{{ ds.meta_data.hostname }}"
	default:
		spec.JoinConfiguration.NodeRegistration.Name = "{{ ds.meta_data.hostname }}"
	}
	return spec
}

// createMachine creates a Machine and its KubeadmConfig.
func createMachine(t testing.TB, ns, name string, r role, spec bootstrapv1.KubeadmConfigSpec) (*clusterv1.Machine, *bootstrapv1.KubeadmConfig) {
	t.Helper()
	ctx := context.Background()
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
		Spec: clusterv1.MachineSpec{
			ClusterName:       clusterName,
			Version:           "v1.33.4",
			Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: name}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachine", Name: name},
		},
	}
	if r == controlPlane {
		m.Labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	if err := k8s.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	return m, createConfig(t, ns, name, "Machine", m.UID, spec)
}

// createOwnerMachine creates a worker Machine for an existing KubeadmConfig
// of the same name.
func createOwnerMachine(t testing.TB, ns, name string) {
	t.Helper()
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
		Spec: clusterv1.MachineSpec{
			ClusterName:       clusterName,
			Version:           "v1.33.4",
			Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: name}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachine", Name: name},
		},
	}
	if err := k8s.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

// createMachinePool creates a MachinePool of one replica and its KubeadmConfig.
func createMachinePool(t testing.TB, ns, name string, spec bootstrapv1.KubeadmConfigSpec) (*clusterv1.MachinePool, *bootstrapv1.KubeadmConfig) {
	t.Helper()
	mp := &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: clusterName,
			Replicas:    ptr.To[int32](1),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName:       clusterName,
				Version:           "v1.33.4",
				Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: name}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachinePool", Name: name},
			}},
		},
	}
	if err := k8s.Create(context.Background(), mp); err != nil {
		t.Fatal(err)
	}
	return mp, createConfig(t, ns, name, "MachinePool", mp.UID, spec)
}

func createConfig(t testing.TB, ns, name, ownerKind string, ownerUID types.UID, spec bootstrapv1.KubeadmConfigSpec) *bootstrapv1.KubeadmConfig {
	t.Helper()
	c := &bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: clusterName},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: ownerKind, Name: name, UID: ownerUID}},
		},
		Spec: spec,
	}
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func getConfig(ctx context.Context, ns, name string) (*bootstrapv1.KubeadmConfig, error) {
	c := &bootstrapv1.KubeadmConfig{}
	return c, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c)
}

func getSecret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	return s, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)
}

// dataSecretCreated reports whether the config's status says its Secret exists.
func dataSecretCreated(c *bootstrapv1.KubeadmConfig) bool {
	return ptr.Deref(c.Status.Initialization.DataSecretCreated, false) && c.Status.DataSecretName != ""
}
