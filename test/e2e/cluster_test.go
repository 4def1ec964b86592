//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	addonsv1beta2 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/addons/catalog"
	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/test/e2e/infra"
	"github.com/nodeboot/nodeboot/test/e2e/lab"
)

// Add-on delivery paths.
const (
	addonsNone      = ""
	addonsFirstBoot = "firstboot" // nodeboot's FirstBootAddons
	addonsCRS       = "crs"       // Cluster API's ClusterResourceSet
)

// nodeLocalDNSIP is the catalog's default link-local address.
const nodeLocalDNSIP = catalog.DefaultLocalIP

// clusterOpts describe one workload cluster.
type clusterOpts struct {
	// name is the namespace and the Cluster's name; machines are
	// <name>-cp and <name>-w (node names are at most 11 characters).
	name string
	// format is cloud-config or ignition; ignition "" is CABPK's legacy
	// 2.3, else a native v3 spec version.
	format, ignition string
	// rsa keeps Cluster API's default RSA-2048 CAs; otherwise ECDSA P-256.
	rsa bool
	// addons: addonsNone, addonsFirstBoot or addonsCRS (Flannel and
	// NodeLocal DNSCache either way).
	addons string
	// worker adds one worker Machine.
	worker bool
	// maxBytes, when set, is the Cluster's bootstrap data budget
	// (nodeboot.dev/bootstrap-data-max-bytes), as on an infrastructure whose
	// user-data limit is larger than EC2's 16 KiB.
	maxBytes int
}

// cluster is a workload cluster the test made.
type cluster struct {
	clusterOpts
	ns      string
	podCIDR string
	cpIP    netip.Addr
	created time.Time
}

var (
	podCIDRMu   sync.Mutex
	podCIDRNext = 244
)

// nextPodCIDR gives each cluster its own pod network, so two clusters'
// Flannel never claim the same subnets on the shared bridge.
func nextPodCIDR() string {
	podCIDRMu.Lock()
	defer podCIDRMu.Unlock()
	c := fmt.Sprintf("10.%d.0.0/16", podCIDRNext)
	podCIDRNext++
	return c
}

func (c *cluster) cp() string     { return c.name + "-cp" }
func (c *cluster) worker() string { return c.name + "-w" }
func (c *cluster) key() types.NamespacedName {
	return types.NamespacedName{Namespace: c.ns, Name: c.name}
}

// newCluster creates the Cluster, its infrastructure, add-ons and
// Machines; the managers and the provider do the rest. Cleanup collects
// every node's logs and stops the nodes.
func newCluster(t testing.TB, o clusterOpts) *cluster {
	t.Helper()
	ctx := context.Background()
	cpIP, err := s.lab.Allocate(10)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{clusterOpts: o, ns: o.name, podCIDR: nextPodCIDR(), cpIP: cpIP}
	t.Cleanup(func() { c.teardown() })
	must(t, s.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns}}))
	labels := map[string]string{}
	switch o.addons {
	case addonsFirstBoot:
		labels["e2e.nodeboot.dev/addons"] = addonsFirstBoot
		for _, a := range c.firstBootAddons() {
			must(t, s.c.Create(ctx, a))
		}
	case addonsCRS:
		labels["e2e.nodeboot.dev/addons"] = addonsCRS
		for _, obj := range c.clusterResourceSet(t) {
			must(t, s.c.Create(ctx, obj))
		}
	}
	c.created = time.Now()
	e2eCluster := &unstructured.Unstructured{}
	e2eCluster.SetGroupVersionKind(infra.ClusterGVK)
	e2eCluster.SetNamespace(c.ns)
	e2eCluster.SetName(c.name)
	_ = unstructured.SetNestedMap(e2eCluster.Object, map[string]any{"host": cpIP.String(), "port": int64(6443)}, "spec", "controlPlaneEndpoint")
	must(t, s.c.Create(ctx, e2eCluster))
	annotations := map[string]string{}
	if o.maxBytes > 0 {
		annotations[addonsctrl.AnnotationMaxBytes] = strconv.Itoa(o.maxBytes)
	}
	must(t, s.c.Create(ctx, &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: c.ns, Labels: labels, Annotations: annotations},
		Spec: clusterv1.ClusterSpec{
			ClusterNetwork: clusterv1.ClusterNetwork{
				Pods:          clusterv1.NetworkRanges{CIDRBlocks: []string{c.podCIDR}},
				Services:      clusterv1.NetworkRanges{CIDRBlocks: []string{"10.96.0.0/12"}},
				ServiceDomain: "cluster.local",
			},
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: cpIP.String(), Port: 6443},
			InfrastructureRef:    clusterv1.ContractVersionedObjectReference{APIGroup: infra.Group, Kind: infra.ClusterKind, Name: c.name},
		},
	}))
	c.addMachine(t, c.cp(), true, c.kubeadmConfig(c.cp(), true), cpIP.String())
	if o.worker {
		c.addMachine(t, c.worker(), false, c.kubeadmConfig(c.worker(), false), "")
	}
	return c
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// labKubeletArgs are the kubelet flags every lab node needs: this machine's
// cgroups are v1 and have no systemd driver inside the nodes; and the nodes'
// disks are the host's shared one, whose free share moves with everything
// else the machine runs (build caches, other clusters' nodes), so the
// default relative thresholds (DiskPressure under 15% free, image GC over
// 85% used) would reject or evict pods, or delete the never-pulled images,
// for reasons outside the node. Absolute floors keep a node's disk
// behaviour its own.
var labKubeletArgs = [][2]string{
	{"fail-cgroupv1", "false"},
	{"cgroup-driver", "cgroupfs"},
	{"eviction-hard", "memory.available<100Mi,nodefs.available<1Gi,imagefs.available<1Gi,nodefs.inodesFree<1%,imagefs.inodesFree<1%"},
	{"image-gc-high-threshold", "100"},
	{"image-gc-low-threshold", "99"},
}

// kubeadmConfig is what a Cluster API user writes for a node of this lab:
// images from the e2e repository (nothing is pulled), the cgroup v1 and
// cgroupfs settings this machine's kernel needs, and the CoreDNS and etcd
// builds the assets made.
func (c *cluster) kubeadmConfig(name string, initNode bool) *bootstrapv1.KubeadmConfig {
	reg := bootstrapv1.NodeRegistrationOptions{
		CRISocket:       "unix:///run/containerd/containerd.sock",
		ImagePullPolicy: corev1.PullNever,
		// This machine's cgroups are v1, which kubeadm 1.37's system
		// verification reports as an error.
		IgnorePreflightErrors: []string{"SystemVerification"},
	}
	for _, a := range labKubeletArgs {
		reg.KubeletExtraArgs = append(reg.KubeletExtraArgs, bootstrapv1.Arg{Name: a[0], Value: ptrTo(a[1])})
	}
	if c.addons == addonsCRS {
		// What an operator who installs NodeLocal DNSCache with a
		// ClusterResourceSet must add to every KubeadmConfig by hand;
		// nodeboot's add-on does it itself.
		reg.KubeletExtraArgs = append(reg.KubeletExtraArgs, bootstrapv1.Arg{Name: "cluster-dns", Value: ptrTo(nodeLocalDNSIP)})
	}
	kc := &bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns},
		Spec: bootstrapv1.KubeadmConfigSpec{
			Format: bootstrapv1.Format(c.format),
			ClusterConfiguration: bootstrapv1.ClusterConfiguration{
				ImageRepository: s.versions["IMAGE_REPO"],
				Etcd:            bootstrapv1.Etcd{Local: bootstrapv1.LocalEtcd{ImageTag: s.versions["ETCD_TAG"]}},
				DNS:             bootstrapv1.DNS{ImageTag: s.versions["COREDNS_TAG"]},
			},
		},
	}
	if !c.rsa {
		kc.Spec.ClusterConfiguration.EncryptionAlgorithm = bootstrapv1.EncryptionAlgorithmECDSAP256
	}
	if c.format == bootstrap.FormatIgnition && c.ignition != "" {
		kc.Annotations = map[string]string{bootstrap.AnnotationIgnitionVersion: c.ignition}
	}
	if initNode {
		kc.Spec.InitConfiguration.NodeRegistration = reg
	} else {
		kc.Spec.JoinConfiguration.NodeRegistration = reg
	}
	return kc
}

// addMachine creates a KubeadmConfig, its Machine and E2EMachine.
func (c *cluster) addMachine(t testing.TB, name string, controlPlane bool, kc *bootstrapv1.KubeadmConfig, address string) {
	t.Helper()
	ctx := context.Background()
	must(t, s.c.Create(ctx, kc))
	im := &unstructured.Unstructured{}
	im.SetGroupVersionKind(infra.MachineGVK)
	im.SetNamespace(c.ns)
	im.SetName(name)
	if address != "" {
		_ = unstructured.SetNestedField(im.Object, address, "spec", "address")
	}
	must(t, s.c.Create(ctx, im))
	labels := map[string]string{clusterv1.ClusterNameLabel: c.name}
	if controlPlane {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	must(t, s.c.Create(ctx, &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns, Labels: labels},
		Spec: clusterv1.MachineSpec{
			ClusterName: c.name,
			Version:     s.versions["K8S_VERSION"],
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: kc.Name,
			}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infra.Group, Kind: infra.MachineKind, Name: name},
		},
	}))
}

// firstBootAddons are Flannel and NodeLocal DNSCache from nodeboot's
// catalog, from the e2e image repository. NodeLocal DNSCache listens on its
// link-local address only ("ipvs" mode: this kernel has no IPVS, but the
// mode is what couples every kubelet's clusterDNS to the cache).
func (c *cluster) firstBootAddons() []*nodebootv1.FirstBootAddon {
	sel := metav1.LabelSelector{MatchLabels: map[string]string{"e2e.nodeboot.dev/addons": addonsFirstBoot}}
	repo := s.versions["IMAGE_REPO"]
	return []*nodebootv1.FirstBootAddon{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "cni", Namespace: c.ns},
			Spec: nodebootv1.FirstBootAddonSpec{ClusterSelector: sel, Order: 0,
				Builtin: &nodebootv1.BuiltinSource{Name: nodebootv1.BuiltinFlannel, ImageRepository: repo}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "dns", Namespace: c.ns},
			Spec: nodebootv1.FirstBootAddonSpec{ClusterSelector: sel, Order: 1,
				Builtin: &nodebootv1.BuiltinSource{Name: nodebootv1.BuiltinNodeLocalDNS, ImageRepository: repo,
					NodeLocalDNS: &nodebootv1.NodeLocalDNSParameters{KubeProxyMode: nodebootv1.KubeProxyIPVS}}},
		},
	}
}

// clusterResourceSet delivers the same two manifests, rendered by the same
// catalog with the same parameters, through Cluster API's own add-on path.
func (c *cluster) clusterResourceSet(t testing.TB) []client.Object {
	t.Helper()
	repo := s.versions["IMAGE_REPO"]
	flannel, err := catalog.Render(catalog.Flannel, "", catalog.Params{PodCIDR: c.podCIDR, ImageRepository: repo})
	must(t, err)
	dns, err := catalog.Render(catalog.NodeLocalDNS, "", catalog.Params{ServiceCIDR: "10.96.0.0/12", KubeProxyMode: "ipvs", ImageRepository: repo})
	must(t, err)
	return []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cni", Namespace: c.ns}, Data: map[string]string{"flannel.yaml": string(flannel.Manifest)}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dns", Namespace: c.ns}, Data: map[string]string{"nodelocaldns.yaml": string(dns.Manifest)}},
		&addonsv1beta2.ClusterResourceSet{
			ObjectMeta: metav1.ObjectMeta{Name: "addons", Namespace: c.ns},
			Spec: addonsv1beta2.ClusterResourceSetSpec{
				ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"e2e.nodeboot.dev/addons": addonsCRS}},
				Resources:       []addonsv1beta2.ResourceRef{{Kind: "ConfigMap", Name: "cni"}, {Kind: "ConfigMap", Name: "dns"}},
				// Cluster API's defaulting webhook sets it; the lab registers no
				// webhook, and the controller refuses an empty strategy.
				Strategy: string(addonsv1beta2.ClusterResourceSetStrategyApplyOnce),
			},
		},
	}
}

// teardown saves every node's logs and stops the nodes.
func (c *cluster) teardown() {
	ctx := context.Background()
	ms := &clusterv1.MachineList{}
	_ = s.c.List(ctx, ms, client.InNamespace(c.ns))
	for _, m := range ms.Items {
		if pm := s.provider.Machine(types.NamespacedName{Namespace: c.ns, Name: m.Name}); pm != nil && pm.Node != nil {
			pm.Node.CollectLogs(ctx)
		}
	}
	s.provider.Stop(c.ns)
	s.lab.Release(c.cpIP)
}

// workload is a client of the cluster's API server.
func (c *cluster) workload(t testing.TB) client.Client {
	t.Helper()
	var wc client.Client
	eventually(t, 5*time.Minute, c.name+": workload kubeconfig", func() (bool, string, error) {
		var err error
		wc, err = s.provider.Workload(context.Background(), c.key())
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
	return wc
}

// kubeconfigFile writes the workload cluster's kubeconfig for kubectl.
func (c *cluster) kubeconfigFile(t testing.TB) string {
	t.Helper()
	kc, err := infra.WorkloadKubeconfig(context.Background(), s.c, c.key())
	must(t, err)
	// Subtests run kubectl side by side: the file is replaced whole, never
	// truncated under a reader.
	f := filepath.Join(s.artifacts, c.name+".kubeconfig")
	tmp, err := os.CreateTemp(s.artifacts, c.name+".kubeconfig.*")
	must(t, err)
	_, err = tmp.Write(kc)
	must(t, errors.Join(err, tmp.Close()))
	must(t, os.Rename(tmp.Name(), f))
	return f
}

// kubectl runs the assets' kubectl against the workload cluster.
func (c *cluster) kubectl(t testing.TB, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.kubectl, append([]string{"--kubeconfig", c.kubeconfigFile(t), "--request-timeout=60s"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// waitReady waits for the named Nodes to be Ready in the workload cluster
// and returns when each became Ready.
func (c *cluster) waitReady(t testing.TB, timeout time.Duration, names ...string) map[string]time.Time {
	t.Helper()
	wc := c.workload(t)
	ready := map[string]time.Time{}
	eventually(t, timeout, c.name+": nodes "+strings.Join(names, ", ")+" Ready", func() (bool, string, error) {
		var missing []string
		for _, n := range names {
			node := &corev1.Node{}
			if err := wc.Get(context.Background(), types.NamespacedName{Name: n}, node); err != nil {
				missing = append(missing, n+": "+err.Error())
				continue
			}
			cond := nodeCondition(node, corev1.NodeReady)
			if cond == nil || cond.Status != corev1.ConditionTrue {
				why := "no Ready condition"
				if cond != nil {
					why = cond.Reason + ": " + cond.Message
				}
				missing = append(missing, n+": "+why)
				continue
			}
			ready[n] = cond.LastTransitionTime.Time
		}
		return len(missing) == 0, strings.Join(missing, "; ") + c.progress(), nil
	})
	return ready
}

// progress says where the cluster's Machines are, for a timeout message.
func (c *cluster) progress() string {
	ms := &clusterv1.MachineList{}
	if err := s.c.List(context.Background(), ms, client.InNamespace(c.ns)); err != nil {
		return ""
	}
	var parts []string
	for _, m := range ms.Items {
		p := m.Name + " " + m.Status.Phase
		if pm := s.provider.Machine(types.NamespacedName{Namespace: c.ns, Name: m.Name}); pm != nil {
			p += " booted"
			if pm.BootErr != nil {
				p += " (" + pm.BootErr.Error() + ")"
			}
		}
		parts = append(parts, p)
	}
	sort.Strings(parts)
	return " [machines: " + strings.Join(parts, ", ") + "]"
}

func nodeCondition(n *corev1.Node, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == typ {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// waitMachinesLinked waits for Cluster API to link each Machine to its Node.
func (c *cluster) waitMachinesLinked(t testing.TB, names ...string) {
	t.Helper()
	eventually(t, 3*time.Minute, c.name+": Machines linked to Nodes", func() (bool, string, error) {
		for _, n := range names {
			m := &clusterv1.Machine{}
			if err := s.c.Get(context.Background(), types.NamespacedName{Namespace: c.ns, Name: n}, m); err != nil {
				return false, err.Error(), nil
			}
			if m.Status.NodeRef.Name != n {
				return false, n + ": no nodeRef yet, phase " + m.Status.Phase, nil
			}
		}
		return true, "", nil
	})
}

// configCondition returns a condition of a KubeadmConfig.
func (c *cluster) configCondition(t testing.TB, name, typ string) *metav1.Condition {
	t.Helper()
	kc := &bootstrapv1.KubeadmConfig{}
	must(t, s.c.Get(context.Background(), types.NamespacedName{Namespace: c.ns, Name: name}, kc))
	return apimeta.FindStatusCondition(kc.Status.Conditions, typ)
}

// waitBootstrapped waits for the node's report: NodeBootstrapped with the
// given reason.
func (c *cluster) waitBootstrapped(t testing.TB, name, reason string, timeout time.Duration) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	eventually(t, timeout, c.name+": "+name+" NodeBootstrapped "+reason, func() (bool, string, error) {
		got = c.configCondition(t, name, nodebootv1.NodeBootstrappedCondition)
		if got == nil {
			return false, "no NodeBootstrapped condition", nil
		}
		return got.Reason == reason, got.Reason + ": " + got.Message, nil
	})
	return got
}

// podsRunning waits until the pods matching the selector run, all their
// containers ready, on every node named (with no node named: at least one
// such pod, anywhere), and returns them by node. Each poll looks afresh: a
// pod that was ready once and then crash-loops does not count.
func (c *cluster) podsRunning(t testing.TB, ns, selector string, nodes ...string) map[string]corev1.Pod {
	t.Helper()
	wc := c.workload(t)
	sel, err := metav1.ParseToLabelSelector(selector)
	must(t, err)
	ls, err := metav1.LabelSelectorAsSelector(sel)
	must(t, err)
	var byNode map[string]corev1.Pod
	eventually(t, 5*time.Minute, fmt.Sprintf("%s: pods %s/%s Running on %v", c.name, ns, selector, nodes), func() (bool, string, error) {
		pods := &corev1.PodList{}
		if err := wc.List(context.Background(), pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: ls}); err != nil {
			return false, err.Error(), nil
		}
		byNode = map[string]corev1.Pod{}
		var states []string
		for _, p := range pods.Items {
			states = append(states, p.Name+"@"+p.Spec.NodeName+"="+podState(&p))
			if p.Status.Phase == corev1.PodRunning && allReady(&p) {
				byNode[p.Spec.NodeName] = p
			}
		}
		if len(byNode) == 0 {
			return false, "none ready: " + strings.Join(states, ", "), nil
		}
		for _, n := range nodes {
			if _, ok := byNode[n]; !ok {
				return false, strings.Join(states, ", "), nil
			}
		}
		return true, "", nil
	})
	return byNode
}

func allReady(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if !cs.Ready {
			return false
		}
	}
	return len(p.Status.ContainerStatuses) > 0
}

func podState(p *corev1.Pod) string {
	s := string(p.Status.Phase)
	// A pod the kubelet refused (eviction, admission) has no container
	// status: its reason and message are all there is to say why.
	if p.Status.Reason != "" {
		s += "/" + p.Status.Reason
	}
	if p.Status.Message != "" {
		s += " (" + p.Status.Message + ")"
	}
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil {
			s += "/" + cs.Name + ":" + w.Reason
		}
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			s += fmt.Sprintf("/%s:exit %d", cs.Name, t.ExitCode)
		}
	}
	return s
}

// kubeletClusterDNS reads the running kubelet's configuration through the
// API server's node proxy (/configz).
func (c *cluster) kubeletClusterDNS(t testing.TB, node string) []string {
	t.Helper()
	out, err := c.kubectl(t, "get", "--raw", "/api/v1/nodes/"+node+"/proxy/configz")
	if err != nil {
		t.Fatalf("configz of %s: %v\n%s", node, err, out)
	}
	var cfg struct {
		KubeletConfig struct {
			ClusterDNS []string `json:"clusterDNS"`
		} `json:"kubeletconfig"`
	}
	must(t, json.Unmarshal([]byte(out), &cfg))
	return cfg.KubeletConfig.ClusterDNS
}

// deleteIfExists deletes an object, ignoring a missing one.
func deleteIfExists(ctx context.Context, c client.Client, obj client.Object) error {
	if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// nodeOf is the lab node of a Machine.
func (c *cluster) nodeOf(t testing.TB, machine string) *lab.Node {
	t.Helper()
	pm := s.provider.Machine(types.NamespacedName{Namespace: c.ns, Name: machine})
	if pm == nil || pm.Node == nil {
		t.Fatalf("machine %s has no node", machine)
	}
	return pm.Node
}

// yamlKubeletArgs is labKubeletArgs as kubeadm's kubeletExtraArgs list
// items, for the configs the tests write by hand.
func yamlKubeletArgs() string {
	var b strings.Builder
	for _, a := range labKubeletArgs {
		fmt.Fprintf(&b, "  - {name: %s, value: %q}\n", a[0], a[1])
	}
	return b.String()
}
