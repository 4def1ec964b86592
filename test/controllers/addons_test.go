package controllers_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/nodeboot/nodeboot/addons"
	"github.com/nodeboot/nodeboot/addons/catalog"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// managerAddonOptions are cmd/manager's defaults (--addons-max-bytes,
// --addons-compress): EC2's 16 KiB budget, gzip where the format allows.
var managerAddonOptions = addonsctrl.ExtensionOptions{Compress: true, MaxBytes: 16384}

const (
	addonLabel = "nodeboot.dev/addons"
	// nodeLocalDNSIP is NodeLocal DNSCache's default link-local address,
	// every kubelet's clusterDNS in IPVS mode.
	nodeLocalDNSIP = "169.254.20.10"
)

// addonNetwork is the selected Cluster's network; the built-ins take their
// parameters from it.
var addonNetwork = clusterv1.ClusterNetwork{
	Pods:          clusterv1.NetworkRanges{CIDRBlocks: []string{"10.244.0.0/16"}},
	Services:      clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/12"}},
	ServiceDomain: "cluster.example",
}

// TestAddons runs first-boot add-ons through the KubeadmConfig reconciler,
// wired as cmd/manager wires it, against a real API server:
//   - a Cluster selected by Flannel and NodeLocal DNSCache (IPVS mode) gets
//     the manifests and the apply step on its init node only, and the
//     link-local clusterDNS in the kubeadm configuration of every node;
//   - Clusters no add-on selects (the namespaces hold add-ons selecting other
//     labels, one of them invalid) get CABPK's reference bytes exactly;
//   - an invalid add-on selecting a Cluster leaves its init node's
//     KubeadmConfig with a condition naming the add-on's field, no Secret,
//     no retry loop, and the init lock released.
func TestAddons(t *testing.T) {
	ctx := context.Background()
	selected := newNamespace(t, "addons")
	createCluster(t, selected, clusterOptions{certs: true, kubeconfig: true, network: addonNetwork,
		labels: map[string]string{addonLabel: "standard"}})
	for _, a := range standardAddons(selected) {
		create(t, a)
	}
	// Selects other Clusters only; were it delivered, the files would show.
	create(t, addon(selected, "other", map[string]string{addonLabel: "other"}, addonsv1.BuiltinSource{Name: addonsv1.BuiltinFlannel}))

	type vector struct{ dir, ns, config string }
	var unselected []vector
	for _, prefix := range []string{"cc-init-minimal-v1.33", "cc-join-cp-minimal-v1.33", "cc-join-worker-minimal-v1.33", "ign-init-minimal-v1.33"} {
		dir := testenv.Vectors(t, prefix)[0]
		raw, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		ns := newNamespace(t, "addons-unselected")
		for _, a := range standardAddons(ns) {
			create(t, a)
		}
		create(t, addon(ns, "unknown", map[string]string{addonLabel: "standard"}, addonsv1.BuiltinSource{Name: "calico"}))
		unselected = append(unselected, vector{dir: dir, ns: ns, config: applyInput(t, ns, raw)})
	}

	invalid := newNamespace(t, "addons-invalid")
	createCluster(t, invalid, clusterOptions{certs: true, network: addonNetwork, labels: map[string]string{addonLabel: "standard"}})
	create(t, addon(invalid, "cni", map[string]string{addonLabel: "standard"}, addonsv1.BuiltinSource{Name: addonsv1.BuiltinFlannel}))
	create(t, addon(invalid, "calico", map[string]string{addonLabel: "standard"}, addonsv1.BuiltinSource{Name: "calico"}))

	watched := []string{selected, invalid}
	for _, v := range unselected {
		watched = append(watched, v.ns)
	}
	statusPatches := &namespacePatches{ns: invalid}
	startManager(t, managerOptions{provider: nodeboot, addons: &managerAddonOptions, wrap: statusPatches.wrap, namespaces: watched})
	createMachine(t, selected, "cp-0", controlPlane, testSpec(controlPlane, false))
	createMachine(t, invalid, "cp-0", controlPlane, testSpec(controlPlane, false))

	t.Run("selected", func(t *testing.T) {
		want := expectedAddonFiles(t)
		applyStep := "/bin/sh " + addons.DefaultDir + "/" + addons.ScriptFile + " " + addons.Digest([]byte(want[2].Content))

		init := nodeData(t, waitForData(t, selected, "cp-0"))
		if !init.gzip {
			t.Errorf("init data with add-ons is not gzip-compressed (--addons-compress)")
		}
		if d := cmp.Diff(want, init.addonFiles()); d != "" {
			t.Errorf("add-on files of the init node (-want +got):\n%s", d)
		}
		// CABPK's kubeadm command, quiet about its token: data that carries
		// add-ons is nodeboot's, not CABPK's bytes, and kubeadm init would
		// print the default bootstrap token into cloud-init's output log.
		initCmd := strings.Replace(vectorRunCmd(t, "cc-init-minimal-v1.33")[0], "kubeadm init ", "kubeadm init --skip-token-print ", 1)
		wantCmds := []string{"echo pre", initCmd, applyStep}
		if d := cmp.Diff(wantCmds, init.RunCmd); d != "" {
			t.Errorf("runcmd of the init node: the apply step must follow kubeadm init (-want +got):\n%s", d)
		}
		checkClusterDNS(t, "init", init.kubeadmConfig(t, "/run/kubeadm/kubeadm.yaml", "InitConfiguration"))

		// The joins come after the control plane is initialized.
		setInitialized(t, selected)
		createMachine(t, selected, "cp-1", controlPlane, testSpec(controlPlane, true))
		createMachine(t, selected, "w-0", worker, testSpec(worker, true))
		for _, j := range []struct{ name, vector string }{{"cp-1", "cc-join-cp-minimal-v1.33"}, {"w-0", "cc-join-worker-minimal-v1.33"}} {
			join := nodeData(t, waitForData(t, selected, j.name))
			if join.gzip {
				t.Errorf("%s: join data without add-ons was compressed", j.name)
			}
			if files := join.addonFiles(); len(files) != 0 {
				t.Errorf("%s: a joining node got add-on files: %v", j.name, files)
			}
			if d := cmp.Diff(append([]string{"echo pre"}, vectorRunCmd(t, j.vector)...), join.RunCmd); d != "" {
				t.Errorf("%s: runcmd of a joining node has no apply step (-want +got):\n%s", j.name, d)
			}
			jc := join.kubeadmConfig(t, "/run/kubeadm/kubeadm-join-config.yaml", "JoinConfiguration")
			checkClusterDNS(t, j.name, jc)
			if _, isCP := jc["controlPlane"]; isCP != (j.name == "cp-1") {
				t.Errorf("%s: JoinConfiguration.controlPlane present = %t", j.name, isCP)
			}
		}
		// The kubelet setting goes into the data, never into the stored spec.
		for _, name := range []string{"cp-0", "cp-1", "w-0"} {
			c, err := getConfig(ctx, selected, name)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := c.Spec.InitConfiguration.NodeRegistration.KubeletExtraArgs, c.Spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs; len(a)+len(b) != 0 {
				t.Errorf("%s: the add-on's kubelet argument was persisted into the spec: %v %v", name, a, b)
			}
		}
	})

	t.Run("unselected", func(t *testing.T) {
		for _, v := range unselected {
			t.Run(filepath.Base(v.dir), func(t *testing.T) {
				s := waitForData(t, v.ns, v.config)
				wantData, err := os.ReadFile(filepath.Join(v.dir, "bootstrap-data"))
				if err != nil {
					t.Fatal(err)
				}
				wantFormat, err := os.ReadFile(filepath.Join(v.dir, "format"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(s.Data["format"], wantFormat) {
					t.Errorf("format = %q, want %q", s.Data["format"], wantFormat)
				}
				if !bytes.Equal(s.Data["value"], wantData) {
					t.Errorf("value differs from CABPK's reference:\n--- got\n%s\n--- want\n%s", s.Data["value"], wantData)
				}
			})
		}
	})

	t.Run("invalid", func(t *testing.T) {
		wantMsg := fmt.Sprintf(`FirstBootAddon %s/calico: spec.builtin.name: Unsupported value: "calico": supported values: "flannel", "nodelocaldns"`, invalid)
		var got *metav1.Condition
		eventually(t, 30*time.Second, "a DataSecretAvailable condition naming the add-on's field", func() (bool, error) {
			c, err := getConfig(ctx, invalid, "cp-0")
			if err != nil {
				return false, err
			}
			got = conditions.Get(c, bootstrapv1.KubeadmConfigDataSecretAvailableCondition)
			return got != nil && got.Message != "Waiting for Cluster control plane to be initialized", nil
		})
		if got.Status != metav1.ConditionFalse || got.Reason != bootstrapv1.KubeadmConfigDataSecretNotAvailableReason || got.Message != wantMsg {
			t.Errorf("DataSecretAvailable = %s/%s %q, want False/%s %q", got.Status, got.Reason, got.Message, bootstrapv1.KubeadmConfigDataSecretNotAvailableReason, wantMsg)
		}
		before := statusPatches.n.Load()
		time.Sleep(3 * time.Second)
		if n := statusPatches.n.Load() - before; n > 1 {
			t.Errorf("%d status patches in 3s after the terminal error: a retry loop", n)
		}
		if _, err := getSecret(ctx, invalid, "cp-0"); !apierrors.IsNotFound(err) {
			t.Errorf("a bootstrap data Secret was written for an invalid add-on (err %v)", err)
		}
		c, err := getConfig(ctx, invalid, "cp-0")
		if err != nil {
			t.Fatal(err)
		}
		if ptr.Deref(c.Status.Initialization.DataSecretCreated, false) || c.Status.DataSecretName != "" {
			t.Errorf("status claims data: %+v", c.Status.Initialization)
		}
		// Another control-plane machine may try: the init lock is released.
		lock := &corev1.ConfigMap{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: invalid, Name: clusterName + "-lock"}, lock); !apierrors.IsNotFound(err) {
			t.Errorf("the init lock is still held after the failure (err %v)", err)
		}
		// The FirstBootAddon controller names the same field on the add-on.
		eventually(t, 30*time.Second, "SourceValid=False on the invalid FirstBootAddon", func() (bool, error) {
			a := &addonsv1.FirstBootAddon{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: invalid, Name: "calico"}, a); err != nil {
				return false, err
			}
			c := meta.FindStatusCondition(a.Status.Conditions, addonsv1.SourceValidCondition)
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == addonsv1.UnknownBuiltinReason &&
				c.Message == `spec.builtin.name: Unsupported value: "calico": supported values: "flannel", "nodelocaldns"`, nil
		})
		// Fixing the add-on re-reconciles the stuck config at once (the
		// controller watches FirstBootAddons), not at the next resync.
		a := &addonsv1.FirstBootAddon{ObjectMeta: metav1.ObjectMeta{Namespace: invalid, Name: "calico"}}
		update(t, a, func() { a.Spec.Builtin = &addonsv1.BuiltinSource{Name: addonsv1.BuiltinFlannel} })
		eventually(t, 30*time.Second, "bootstrap data once the add-on is fixed", func() (bool, error) {
			_, err := getSecret(ctx, invalid, "cp-0")
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil, err
		})
	})
}

// standardAddons are Flannel and NodeLocal DNSCache in IPVS mode, selecting
// Clusters labelled standard.
func standardAddons(ns string) []*addonsv1.FirstBootAddon {
	sel := map[string]string{addonLabel: "standard"}
	dns := addon(ns, "dns", sel, addonsv1.BuiltinSource{Name: addonsv1.BuiltinNodeLocalDNS,
		NodeLocalDNS: &addonsv1.NodeLocalDNSParameters{KubeProxyMode: addonsv1.KubeProxyIPVS}})
	dns.Spec.Order = 10
	return []*addonsv1.FirstBootAddon{addon(ns, "cni", sel, addonsv1.BuiltinSource{Name: addonsv1.BuiltinFlannel}), dns}
}

func addon(ns, name string, sel map[string]string, b addonsv1.BuiltinSource) *addonsv1.FirstBootAddon {
	return &addonsv1.FirstBootAddon{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       addonsv1.FirstBootAddonSpec{ClusterSelector: metav1.LabelSelector{MatchLabels: sel}, Builtin: &b},
	}
}

func create(t *testing.T, o client.Object) {
	t.Helper()
	if err := k8s.Create(context.Background(), o); err != nil {
		t.Fatalf("create %T %s: %v", o, o.GetName(), err)
	}
}

// setInitialized marks the Cluster's control plane initialized, as Cluster
// API's core controllers do after kubeadm init.
func setInitialized(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	c := &clusterv1.Cluster{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, c); err != nil {
		t.Fatal(err)
	}
	c.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	conditions.Set(c, metav1.Condition{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: metav1.ConditionTrue, Reason: "Initialized"})
	if err := k8s.Status().Update(ctx, c); err != nil {
		t.Fatal(err)
	}
}

// waitForData waits for the config's bootstrap data Secret.
func waitForData(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	ctx := context.Background()
	var s *corev1.Secret
	eventually(t, 60*time.Second, "the bootstrap data Secret of "+ns+"/"+name, func() (bool, error) {
		var err error
		s, err = getSecret(ctx, ns, name)
		return err == nil, err
	})
	return s
}

// expectedAddonFiles are the files the init node must get: each built-in
// rendered by the catalog with the parameters the Cluster implies, the index
// and the apply script.
func expectedAddonFiles(t *testing.T) []cloudFile {
	t.Helper()
	base := catalog.Params{PodCIDR: "10.244.0.0/16", ServiceCIDR: "10.128.0.0/12", ClusterDomain: "cluster.example"}
	flannel, err := catalog.Render(addonsv1.BuiltinFlannel, "", base)
	if err != nil {
		t.Fatal(err)
	}
	ipvs := base
	ipvs.KubeProxyMode = "ipvs"
	dns, err := catalog.Render(addonsv1.BuiltinNodeLocalDNS, "", ipvs)
	if err != nil {
		t.Fatal(err)
	}
	// IPVS mode must matter, or this test would not tell the modes apart.
	if iptables, err := catalog.Render(addonsv1.BuiltinNodeLocalDNS, "", base); err != nil || bytes.Equal(iptables.Manifest, dns.Manifest) {
		t.Fatalf("NodeLocal DNSCache renders the same in iptables and IPVS mode (err %v)", err)
	}
	index := fmt.Sprintf("cni\t%s\t%s\t000-cni.yaml\t-\ndns\t%s\t%s\t010-dns.yaml\t-\n",
		flannel.Version, addons.Digest(flannel.Manifest), dns.Version, addons.Digest(dns.Manifest))
	dir := addons.DefaultDir + "/"
	return []cloudFile{
		{Path: dir + "000-cni.yaml", Owner: "root:root", Permissions: "0600", Content: string(flannel.Manifest)},
		{Path: dir + "010-dns.yaml", Owner: "root:root", Permissions: "0600", Content: string(dns.Manifest)},
		{Path: dir + addons.IndexFile, Owner: "root:root", Permissions: "0600", Content: index},
		{Path: dir + addons.ScriptFile, Owner: "root:root", Permissions: "0700", Content: addons.Script()},
	}
}

// cloudFile is a write_files entry of cloud-config.
type cloudFile struct {
	Path        string `yaml:"path"`
	Owner       string `yaml:"owner"`
	Permissions string `yaml:"permissions"`
	Encoding    string `yaml:"encoding,omitempty"`
	Content     string `yaml:"content"`
}

// cloudConfig is rendered cloud-config as cloud-init reads it.
type cloudConfig struct {
	WriteFiles []cloudFile `yaml:"write_files"`
	RunCmd     []string    `yaml:"runcmd"`
	gzip       bool
}

// nodeData decodes a cloud-config bootstrap data Secret, gzip or plain.
func nodeData(t *testing.T, s *corev1.Secret) *cloudConfig {
	t.Helper()
	cc, err := decodeCloudConfig(s)
	if err != nil {
		t.Fatalf("%s/%s: %v", s.Namespace, s.Name, err)
	}
	return cc
}

// decodeCloudConfig is nodeData for callers without a *testing.T.
func decodeCloudConfig(s *corev1.Secret) (*cloudConfig, error) {
	if got := string(s.Data["format"]); got != "cloud-config" {
		return nil, fmt.Errorf("format %q, want cloud-config", got)
	}
	data := s.Data["value"]
	cc := &cloudConfig{}
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		cc.gzip = true
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		if data, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	}
	if !bytes.HasPrefix(data, []byte("## template: jinja\n#cloud-config\n")) {
		return nil, errors.New("not cloud-config with CABPK's jinja header")
	}
	if err := yaml.Unmarshal(data, cc); err != nil {
		return nil, fmt.Errorf("cloud-config does not parse: %w", err)
	}
	return cc, nil
}

// addonFiles are the files under the add-on directory.
func (c *cloudConfig) addonFiles() []cloudFile {
	var out []cloudFile
	for _, f := range c.WriteFiles {
		if strings.HasPrefix(f.Path, addons.DefaultDir+"/") {
			out = append(out, f)
		}
	}
	return out
}

// kubeadmConfig parses the kubeadm file at path and returns its document of
// the given kind.
func (c *cloudConfig) kubeadmConfig(t *testing.T, path, kind string) map[string]any {
	t.Helper()
	for _, f := range c.WriteFiles {
		if f.Path != path {
			continue
		}
		dec := yaml.NewDecoder(strings.NewReader(f.Content))
		for {
			doc := map[string]any{}
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s does not parse: %v", path, err)
			}
			if doc["kind"] == kind {
				if doc["apiVersion"] != "kubeadm.k8s.io/v1beta4" {
					t.Errorf("%s: %s is %v, want kubeadm.k8s.io/v1beta4 for v1.33", path, kind, doc["apiVersion"])
				}
				return doc
			}
		}
		t.Fatalf("%s has no %s", path, kind)
	}
	t.Fatalf("no %s in write_files", path)
	return nil
}

// joinToken is discovery.bootstrapToken.token of the JoinConfiguration in a
// cloud-config join's data.
func joinToken(t *testing.T, s *corev1.Secret) string {
	t.Helper()
	jc := nodeData(t, s).kubeadmConfig(t, "/run/kubeadm/kubeadm-join-config.yaml", "JoinConfiguration")
	discovery, _ := jc["discovery"].(map[string]any)
	bt, _ := discovery["bootstrapToken"].(map[string]any)
	token, _ := bt["token"].(string)
	return token
}

// checkClusterDNS: the kubelet's clusterDNS is NodeLocal DNSCache's address,
// the only kubelet argument (testSpec sets none).
func checkClusterDNS(t *testing.T, node string, cfg map[string]any) {
	t.Helper()
	nr, _ := cfg["nodeRegistration"].(map[string]any)
	want := []any{map[string]any{"name": "cluster-dns", "value": nodeLocalDNSIP}}
	if d := cmp.Diff(want, nr["kubeletExtraArgs"]); d != "" {
		t.Errorf("%s: nodeRegistration.kubeletExtraArgs (-want +got):\n%s", node, d)
	}
}

// vectorRunCmd is the runcmd of a CABPK reference vector: the kubeadm
// command exactly as CABPK writes it.
func vectorRunCmd(t *testing.T, vector string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.Vectors(t, vector)[0], "bootstrap-data"))
	if err != nil {
		t.Fatal(err)
	}
	var cc cloudConfig
	if err := yaml.Unmarshal(raw, &cc); err != nil {
		t.Fatal(err)
	}
	if len(cc.RunCmd) != 1 {
		t.Fatalf("%s: runcmd %q, want the kubeadm command alone", vector, cc.RunCmd)
	}
	return cc.RunCmd
}

// namespacePatches counts KubeadmConfig status patches in one namespace, to
// detect retry loops.
type namespacePatches struct {
	ns string
	n  atomic.Int64
}

func (c *namespacePatches) wrap(cl client.Client) client.Client {
	return interceptor.NewClient(cl.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*bootstrapv1.KubeadmConfig); ok && obj.GetNamespace() == c.ns {
				c.n.Add(1)
			}
			return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}
