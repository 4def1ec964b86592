package differential

import (
	"fmt"
	"math/rand/v2"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// role of a generated scenario.
type role int

const (
	roleInit role = iota
	roleJoinCP
	roleWorker
	roleMachinePool
)

func (r role) String() string {
	return [...]string{"init", "join-cp", "worker", "machinepool"}[r]
}

// scenario is one generated KubeadmConfig with everything around it.
type scenario struct {
	name        string
	role        role
	version     string
	cluster     *clusterv1.Cluster
	machine     *clusterv1.Machine
	machinePool *clusterv1.MachinePool
	config      *bootstrapv1.KubeadmConfig
	// extra Secrets referenced by contentFrom/passwdFrom.
	secrets []*corev1.Secret
	// kcpVersion, when set, is spec.version of a KubeadmControlPlane the
	// Cluster refers to.
	kcpVersion   string
	externalEtcd bool
}

// gen draws scenarios from a fixed seed, so a failure is reproducible by name.
type gen struct {
	r *rand.Rand
	// spice scales, in percent, how often YAML-special values are drawn
	// instead of ordinary ones.
	spice int
	// safe keeps the ordinary values to those CABPK's legacy Ignition
	// renders (absolute devices and mount points, filesystem formats its
	// transpiler knows, CLC snippets it parses), so that most configs of
	// the rendering set render; the refusal set draws without it.
	safe bool
}

// spicy is true pct% of the time, scaled by spice.
func (g *gen) spicy(pct int) bool { return g.r.IntN(100*100) < pct*g.spice }

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) chance(pct int) bool      { return g.r.IntN(100) < pct }
func (g *gen) optBool() *bool {
	switch g.r.IntN(3) {
	case 0:
		return nil
	case 1:
		return ptr.To(false)
	}
	return ptr.To(true)
}

func (g *gen) args(names ...string) []bootstrapv1.Arg {
	var out []bootstrapv1.Arg
	for _, n := range names {
		if g.chance(50) {
			out = append(out, bootstrapv1.Arg{Name: n, Value: ptr.To(g.val(20, "true", "false", "10", "a,b", "/var/log/x.log", ""))})
		}
	}
	return out
}

var versions = []string{"v1.22.17", "v1.23.17", "v1.24.17", "v1.25.16", "v1.26.15", "v1.27.16", "v1.28.15",
	"v1.29.14", "v1.30.14", "v1.31.12", "v1.32.8", "v1.33.4", "v1.34.1", "v1.35.0"}

// scenario draws the objects around a KubeadmConfig of the given format;
// the caller fills in the spec (g.spec or g.ignitionSpec).
func (g *gen) scenario(i int, format bootstrapv1.Format) *scenario {
	s := &scenario{role: role(i % 4), version: versions[g.r.IntN(len(versions))]}
	g.spice = 100
	prefix := "cc"
	if format == bootstrapv1.Ignition {
		prefix = "ign"
	}
	s.name = fmt.Sprintf("%s-%04d-%s-%s", prefix, i, s.role, strings.ReplaceAll(s.version, ".", "-"))
	ns, clusterName := "default", fmt.Sprintf("cluster-%04d", i)
	s.cluster = &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: clusterName, Namespace: ns},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: g.pick("10.0.0.100", "api.example.internal", "fd00::1"), Port: int32(g.pick2(6443, 443))},
			InfrastructureRef:    clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerCluster", Name: clusterName},
		},
	}
	if g.chance(70) {
		s.cluster.Spec.ClusterNetwork.Pods.CIDRBlocks = []string{g.pick("192.168.0.0/16", "10.244.0.0/16")}
		if g.chance(30) {
			s.cluster.Spec.ClusterNetwork.Pods.CIDRBlocks = append(s.cluster.Spec.ClusterNetwork.Pods.CIDRBlocks, "fd00:10:244::/56")
		}
	}
	if g.chance(50) {
		s.cluster.Spec.ClusterNetwork.Services.CIDRBlocks = []string{"10.96.0.0/12"}
	}
	if g.chance(40) {
		s.cluster.Spec.ClusterNetwork.ServiceDomain = g.pick("cluster.local", "prod.local")
	}
	initialized := s.role != roleInit
	status := metav1.ConditionFalse
	if initialized {
		status = metav1.ConditionTrue
	}
	s.cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	s.cluster.Status.Initialization.ControlPlaneInitialized = ptr.To(initialized)
	s.cluster.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: status,
		Reason: "Generated", LastTransitionTime: metav1.Now()}}
	if g.chance(25) {
		s.kcpVersion = g.pick("1.33.4", "v1.34.1", "v1.35.0")
		s.cluster.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane", Name: clusterName + "-cp"}
	}

	s.config = &bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: ns, UID: "00000000-0000-0000-0000-0000000000cf",
			Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
	}
	ref := clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: s.name}
	infra := clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachine", Name: s.name}
	owner := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Name: s.name, UID: "00000000-0000-0000-0000-000000000001"}
	if s.role == roleMachinePool {
		owner.Kind = "MachinePool"
		s.machinePool = &clusterv1.MachinePool{
			ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: ns, UID: owner.UID, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
			Spec: clusterv1.MachinePoolSpec{ClusterName: clusterName, Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: clusterName, Version: s.version, Bootstrap: clusterv1.Bootstrap{ConfigRef: ref}, InfrastructureRef: infra}}},
		}
	} else {
		owner.Kind = "Machine"
		labels := map[string]string{clusterv1.ClusterNameLabel: clusterName}
		if s.role == roleInit || s.role == roleJoinCP {
			labels[clusterv1.MachineControlPlaneLabel] = ""
		}
		s.machine = &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: ns, UID: owner.UID, Labels: labels},
			Spec:       clusterv1.MachineSpec{ClusterName: clusterName, Version: s.version, Bootstrap: clusterv1.Bootstrap{ConfigRef: ref}, InfrastructureRef: infra},
		}
	}
	s.config.OwnerReferences = []metav1.OwnerReference{owner}
	s.config.Spec.Format = format
	return s
}

func (g *gen) pick2(a, b int) int {
	if g.chance(50) {
		return a
	}
	return b
}
