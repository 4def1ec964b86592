// Package manager_test starts the built manager binary (cmd/manager) against
// a real kube-apiserver and etcd (envtest) with the flags of its Deployment:
// leader election on, webhooks serving a certificate generated here,
// diagnostics and probes on loopback ports. It checks what a kubelet and an
// operator see: probes, metrics, the validating webhook answering, a
// KubeadmConfig turned into its data Secret, shutdown on SIGTERM within the
// Deployment's grace period, one clear error when the FirstBootAddon CRD is
// missing, the Lease handed from one replica to another, and the API server
// converting KubeadmConfigs and KubeadmConfigTemplates between v1beta1 and
// v1beta2 through the manager's conversion webhook.
package manager_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// gracePeriod is the Deployment's terminationGracePeriodSeconds
// (config/manager/manager.yaml): the kubelet kills the manager after it.
const gracePeriod = 10 * time.Second

const leaseNamespace = "capi-kubeadm-bootstrap-system"

var scheme = runtime.NewScheme()

func init() {
	ctrllog.SetLogger(logr.Discard()) // the manager's own logs are what the test reads
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
}

// TestManagerBinary runs the whole life of the manager binary: first on an
// API server without the FirstBootAddon CRD (add-ons off, said once,
// KubeadmConfigs still reconciled), then, with the CRD installed, two
// replicas sharing the leader-election Lease.
func TestManagerBinary(t *testing.T) {
	testenv.KubebuilderAssets(t)
	crds := capiCRDs(t)
	env := &envtest.Environment{CRDInstallOptions: envtest.CRDInstallOptions{CRDs: crds}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	tmp := t.TempDir()
	bin := buildManager(t, tmp)
	user, err := env.AddUser(envtest.User{Name: "nodeboot-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfigPath := filepath.Join(tmp, "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	certDir, caPool, caPEM := servingCert(t, tmp)
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}}); err != nil {
		t.Fatal(err)
	}

	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "manager v") || strings.Contains(string(out), "commit unknown") {
		t.Fatalf("manager --version: %q, %v (want the module version and commit)", out, err)
	}

	t.Run("without the FirstBootAddon CRD", func(t *testing.T) {
		m := start(t, bin, kubeconfigPath, certDir, "a")
		m.waitReady(t)
		m.probes(t)
		m.webhook(t, caPool)
		ns := newNamespace(t, k8s, "no-addons")
		reconciled(t, k8s, ns, "cp-0")
		m.metrics(t)
		m.stop(t)
		logs := m.logs()
		if v := strings.Fields(string(out)); !strings.Contains(logs, `"Starting manager"`) || !strings.Contains(logs, `version="`+v[1]+`"`) {
			t.Errorf("the manager does not log its version %s at start", v[1])
		}
		if n := strings.Count(logs, "The FirstBootAddon CRD is not installed"); n != 1 {
			t.Errorf("the missing CRD is reported %d times, want once:\n%s", n, logs)
		}
		if strings.Contains(logs, "no matches for kind") {
			t.Errorf("the manager still trips over the missing FirstBootAddon kind:\n%s", grep(logs, "no matches for kind"))
		}
	})

	// Install the FirstBootAddon CRD the release ships.
	addonCRD := &apiextensionsv1.CustomResourceDefinition{}
	raw, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(), "config", "crd", "addons", "addons.nodeboot.dev_firstbootaddons.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, addonCRD); err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{addonCRD}}); err != nil {
		t.Fatal(err)
	}

	t.Run("two replicas hand the Lease over", func(t *testing.T) {
		a := start(t, bin, kubeconfigPath, certDir, "a")
		a.waitReady(t)
		first := waitLeader(t, k8s, a, "")
		b := start(t, bin, kubeconfigPath, certDir, "b")
		b.waitReady(t) // the standby serves probes and webhooks too
		ns := newNamespace(t, k8s, "leader-a")
		reconciled(t, k8s, ns, "cp-0")
		if strings.Contains(b.logs(), "Successfully acquired lease") {
			t.Errorf("the standby took the Lease while the leader ran")
		}
		a.stop(t) // releases the Lease on the way out
		handover := time.Now()
		waitLeader(t, k8s, b, first)
		t.Logf("replica b took the Lease %s after replica a stopped", time.Since(handover).Round(time.Millisecond))
		ns = newNamespace(t, k8s, "leader-b")
		reconciled(t, k8s, ns, "cp-0")
		b.stop(t)
		if strings.Contains(a.logs()+b.logs(), "The FirstBootAddon CRD is not installed") {
			t.Errorf("add-ons reported off although the CRD is installed")
		}
	})

	t.Run("conversion webhook", func(t *testing.T) {
		m := start(t, bin, kubeconfigPath, certDir, "c")
		m.waitReady(t)
		m.conversion(t, k8s, caPEM)
	})
}

// manager is one running manager process.
type manager struct {
	name                             string
	cmd                              *exec.Cmd
	health, metricsAddr, webhookAddr string
	out                              *testenv.OutputBuffer
	done                             chan error
}

func start(t *testing.T, bin, kubeconfig, certDir, name string) *manager {
	t.Helper()
	m := &manager{name: name, health: freeAddr(t), metricsAddr: freeAddr(t), webhookAddr: freeAddr(t), out: &testenv.OutputBuffer{}, done: make(chan error, 1)}
	_, webhookPort, _ := net.SplitHostPort(m.webhookAddr)
	// The Deployment's arguments, with loopback addresses and the fast
	// leader-election timings of a test.
	m.cmd = exec.Command(bin,
		"--kubeconfig="+kubeconfig,
		"--leader-elect",
		"--leader-elect-namespace="+leaseNamespace,
		"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=4s", "--leader-elect-retry-period=1s",
		"--diagnostics-address="+m.metricsAddr,
		"--insecure-diagnostics=true",
		"--feature-gates=MachinePool=true,KubeadmBootstrapFormatIgnition=false,PriorityQueue=true,ReconcilerRateLimiting=true",
		"--bootstrap-token-ttl=15m",
		"--health-addr="+m.health,
		"--webhook-port="+webhookPort,
		"--webhook-cert-dir="+certDir,
	)
	m.cmd.Env = append(os.Environ(), "POD_NAME="+name, "POD_NAMESPACE="+leaseNamespace)
	m.cmd.Stdout, m.cmd.Stderr = m.out, m.out
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { m.done <- m.cmd.Wait() }()
	t.Cleanup(func() {
		if m.cmd.ProcessState == nil {
			_ = m.cmd.Process.Kill()
			<-m.done
		}
		if t.Failed() {
			t.Logf("manager %s output:\n%s", name, m.logs())
		}
	})
	return m
}

func (m *manager) logs() string { return m.out.String() }

func (m *manager) waitReady(t *testing.T) {
	t.Helper()
	eventually(t, 60*time.Second, "manager "+m.name+" ready", func() (bool, error) {
		select {
		case err := <-m.done:
			m.done <- err
			t.Fatalf("manager %s exited: %v\n%s", m.name, err, m.logs())
		default:
		}
		code, _, err := get("http://" + m.health + "/readyz")
		return code == http.StatusOK, err
	})
}

// probes: the kubelet's readiness and liveness paths answer 200, and a
// named check answers too (what `kubectl get --raw` style probes use).
func (m *manager) probes(t *testing.T) {
	t.Helper()
	for _, path := range []string{"/readyz", "/healthz", "/readyz/ready", "/healthz/healthy"} {
		code, body, err := get("http://" + m.health + path)
		if err != nil || code != http.StatusOK {
			t.Errorf("GET %s: %d %q %v", path, code, body, err)
		}
	}
	if code, _, _ := get("http://" + m.health + "/readyz/nonexistent"); code != http.StatusNotFound {
		t.Errorf("GET /readyz/nonexistent: %d, want 404", code)
	}
}

// metrics: Prometheus text exposition with the controllers' and the
// workqueues' series.
func (m *manager) metrics(t *testing.T) {
	t.Helper()
	code, body, err := get("http://" + m.metricsAddr + "/metrics")
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", code, err)
	}
	for _, want := range []string{
		"# TYPE controller_runtime_reconcile_total counter",
		`controller_runtime_reconcile_total{controller="kubeadmconfig",result="success"}`,
		`workqueue_adds_total{controller="kubeadmconfig"`,
		"# TYPE go_goroutines gauge",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// webhook: the KubeadmConfig validating webhook answers an AdmissionReview
// over TLS with the generated serving certificate: one valid config is
// allowed, one CABPK refuses (two kubeadm configurations for one node) is not.
func (m *manager) webhook(t *testing.T, ca *x509.CertPool) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca, ServerName: "localhost"}}}
	review := func(spec bootstrapv1.KubeadmConfigSpec) *admissionv1.AdmissionResponse {
		obj := &bootstrapv1.KubeadmConfig{TypeMeta: metav1.TypeMeta{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig"}, ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"}, Spec: spec}
		raw, _ := json.Marshal(obj)
		ar := admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{
				UID: "1", Operation: admissionv1.Create, Name: "x", Namespace: "default",
				Kind:     metav1.GroupVersionKind{Group: bootstrapv1.GroupVersion.Group, Version: "v1beta2", Kind: "KubeadmConfig"},
				Resource: metav1.GroupVersionResource{Group: bootstrapv1.GroupVersion.Group, Version: "v1beta2", Resource: "kubeadmconfigs"},
				Object:   runtime.RawExtension{Raw: raw},
			},
		}
		body, _ := json.Marshal(ar)
		resp, err := c.Post("https://"+m.webhookAddr+"/validate-bootstrap-cluster-x-k8s-io-v1beta2-kubeadmconfig", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("webhook: %v", err)
		}
		defer resp.Body.Close()
		out := admissionv1.AdmissionReview{}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Response == nil {
			t.Fatalf("webhook answer: %v", err)
		}
		return out.Response
	}
	if r := review(bootstrapv1.KubeadmConfigSpec{Files: []bootstrapv1.File{{Path: "/etc/motd", Content: "hi"}}}); !r.Allowed {
		t.Errorf("webhook refused a valid KubeadmConfig: %+v", r.Result)
	}
	bad := bootstrapv1.KubeadmConfigSpec{Files: []bootstrapv1.File{{Path: "/etc/motd", Content: "hi", ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "s", Key: "k"}}}}}
	if r := review(bad); r.Allowed {
		t.Errorf("webhook allowed a file with both content and contentFrom")
	}
}

// v1beta1 is the older version the KubeadmConfig CRDs still serve; v1beta2
// is the storage version.
var v1beta1 = schema.GroupVersion{Group: bootstrapv1.GroupVersion.Group, Version: "v1beta1"}

// conversion points the KubeadmConfig and KubeadmConfigTemplate CRDs'
// conversion at the manager's webhook server, as the release's CRD patches
// and cert-manager's CA injection do, and reads and writes both kinds at
// v1beta1: the API server must convert through the manager, in both
// directions, until the manager stops.
func (m *manager) conversion(t *testing.T, k8s client.Client, caPEM []byte) { //nolint:thelper // a subtest's body, not a helper: failures must point inside it
	ctx := context.Background()
	ns := newNamespace(t, k8s, "conversion")
	// Written at the storage version; v1beta1 names the same facts
	// differently (extraArgs a map, status.initialization.dataSecretCreated
	// status.ready).
	kc := &bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "from-v1beta2", Namespace: ns},
		Spec: bootstrapv1.KubeadmConfigSpec{ClusterConfiguration: bootstrapv1.ClusterConfiguration{
			APIServer: bootstrapv1.APIServer{ExtraArgs: []bootstrapv1.Arg{{Name: "v", Value: ptr.To("4")}}},
		}},
	}
	if err := k8s.Create(ctx, kc); err != nil {
		t.Fatal(err)
	}
	kc.Status.DataSecretName = "from-v1beta2"
	kc.Status.Initialization.DataSecretCreated = ptr.To(true)
	if err := k8s.Status().Update(ctx, kc); err != nil {
		t.Fatal(err)
	}
	getV1beta1 := func(kind, name string) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(v1beta1.WithKind(kind))
		return u, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
	}
	ready := func(u *unstructured.Unstructured) bool {
		r, _, _ := unstructured.NestedBool(u.Object, "status", "ready")
		return r
	}
	// Without a conversion webhook (the CRDs' strategy None) the API
	// server only relabels the object: nothing is renamed.
	if u, err := getV1beta1("KubeadmConfig", kc.Name); err != nil || ready(u) {
		t.Fatalf("v1beta1 GET before the webhook is configured: %v, status %v (want the stored object relabelled, no status.ready)", err, u.Object["status"])
	}

	url := "https://" + m.webhookAddr + "/convert"
	for _, name := range []string{"kubeadmconfigs", "kubeadmconfigtemplates"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: name + "." + bootstrapv1.GroupVersion.Group}, crd); err != nil {
			t.Fatal(err)
		}
		before := crd.DeepCopy()
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
				ConversionReviewVersions: []string{"v1"},
			},
		}
		if err := k8s.Patch(ctx, crd, client.MergeFrom(before)); err != nil {
			t.Fatalf("point %s at the conversion webhook: %v", crd.Name, err)
		}
	}
	begin := time.Now()
	var got *unstructured.Unstructured
	eventually(t, 15*time.Second, "a v1beta1 KubeadmConfig converted by the webhook", func() (bool, error) {
		u, err := getV1beta1("KubeadmConfig", kc.Name)
		got = u
		return err == nil && ready(u), err
	})
	t.Logf("the API server converted through the webhook %s after the CRDs changed", time.Since(begin).Round(time.Millisecond))
	if got.GetAPIVersion() != v1beta1.String() {
		t.Errorf("apiVersion %q, want %s", got.GetAPIVersion(), v1beta1)
	}
	if args, _, _ := unstructured.NestedStringMap(got.Object, "spec", "clusterConfiguration", "apiServer", "extraArgs"); len(args) != 1 || args["v"] != "4" {
		t.Errorf("v1beta1 spec.clusterConfiguration.apiServer.extraArgs = %v, want map[v:4]", got.Object["spec"])
	}
	if n, _, _ := unstructured.NestedString(got.Object, "status", "dataSecretName"); n != "from-v1beta2" {
		t.Errorf("v1beta1 status.dataSecretName = %q, want from-v1beta2", n)
	}

	// Written at v1beta1: stored, and read back, as v1beta2.
	wantArgs := []bootstrapv1.Arg{{Name: "audit-log-maxage", Value: ptr.To("10")}}
	spec := map[string]any{"clusterConfiguration": map[string]any{"apiServer": map[string]any{"extraArgs": map[string]any{"audit-log-maxage": "10"}}}}
	for _, o := range []struct {
		kind string
		spec map[string]any
		obj  client.Object
	}{
		{kind: "KubeadmConfig", spec: spec, obj: &bootstrapv1.KubeadmConfig{}},
		{kind: "KubeadmConfigTemplate", spec: map[string]any{"template": map[string]any{"spec": spec}}, obj: &bootstrapv1.KubeadmConfigTemplate{}},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1beta1.String(), "kind": o.kind,
			"metadata": map[string]any{"name": "from-v1beta1", "namespace": ns},
			"spec":     o.spec,
		}}
		if err := k8s.Create(ctx, u); err != nil {
			t.Fatalf("create a v1beta1 %s: %v", o.kind, err)
		}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "from-v1beta1"}, o.obj); err != nil {
			t.Fatal(err)
		}
		var args []bootstrapv1.Arg
		switch obj := o.obj.(type) {
		case *bootstrapv1.KubeadmConfig:
			args = obj.Spec.ClusterConfiguration.APIServer.ExtraArgs
		case *bootstrapv1.KubeadmConfigTemplate:
			args = obj.Spec.Template.Spec.ClusterConfiguration.APIServer.ExtraArgs
		}
		if !equality.Semantic.DeepEqual(args, wantArgs) {
			t.Errorf("%s written at v1beta1 reads at v1beta2 with apiServer extraArgs %v, want %v", o.kind, args, wantArgs)
		}
		back, err := getV1beta1(o.kind, "from-v1beta1")
		if err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(back.Object["spec"], u.Object["spec"]) {
			t.Errorf("%s round trip v1beta1 -> v1beta2 -> v1beta1: spec %v, want %v", o.kind, back.Object["spec"], u.Object["spec"])
		}
	}

	// The answers came from the manager: with it gone, v1beta1 fails and
	// the storage version still reads.
	m.stop(t)
	if _, err := getV1beta1("KubeadmConfig", kc.Name); err == nil || !strings.Contains(err.Error(), "conversion webhook") || !strings.Contains(err.Error(), url) {
		t.Errorf("v1beta1 GET with the manager stopped: %v, want a conversion webhook error for %s", err, url)
	} else {
		t.Logf("with the manager stopped: %v", err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(kc), &bootstrapv1.KubeadmConfig{}); err != nil {
		t.Errorf("v1beta2 GET with the manager stopped: %v", err)
	}
}

// stop sends SIGTERM, as the kubelet does, and wants a clean exit within
// the Deployment's grace period.
func (m *manager) stop(t *testing.T) {
	t.Helper()
	begin := time.Now()
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-m.done:
		if err != nil {
			t.Errorf("manager %s exited after SIGTERM with %v", m.name, err)
		}
		t.Logf("manager %s stopped %s after SIGTERM", m.name, time.Since(begin).Round(time.Millisecond))
	case <-time.After(gracePeriod):
		t.Fatalf("manager %s still running %s after SIGTERM (the kubelet would kill it)", m.name, gracePeriod)
	}
}

// reconciled creates an uninitialized Cluster and its first control-plane
// Machine and KubeadmConfig in ns and waits for the data Secret.
func reconciled(t *testing.T, k8s client.Client, ns, name string) {
	t.Helper()
	ctx := context.Background()
	const cluster = "c"
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: cluster, Namespace: ns},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "10.0.0.100", Port: 6443},
			InfrastructureRef:    clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerCluster", Name: cluster},
		},
	}
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	c.Status.Initialization.ControlPlaneInitialized = ptr.To(false)
	c.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: metav1.ConditionFalse, Reason: "WaitingForControlPlane", LastTransitionTime: metav1.Now()}}
	if err := k8s.Status().Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster, clusterv1.MachineControlPlaneLabel: ""}},
		Spec: clusterv1.MachineSpec{
			ClusterName:       cluster,
			Version:           "v1.33.4",
			Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: name}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachine", Name: name},
		},
	}
	if err := k8s.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	kc := &bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: cluster},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: m.UID}},
		},
		Spec: bootstrapv1.KubeadmConfigSpec{Files: []bootstrapv1.File{{Path: "/etc/motd", Content: "welcome"}}},
	}
	if err := k8s.Create(ctx, kc); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the data Secret of "+ns+"/"+name, func() (bool, error) {
		s := &corev1.Secret{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			return false, err
		}
		return bytes.HasPrefix(s.Data["value"], []byte("## template: jinja\n#cloud-config\n")) && string(s.Data["format"]) == "cloud-config", nil
	})
	eventually(t, 30*time.Second, "status.dataSecretName of "+ns+"/"+name, func() (bool, error) {
		got := &bootstrapv1.KubeadmConfig{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(kc), got); err != nil {
			return false, err
		}
		return got.Status.DataSecretName == name && ptr.Deref(got.Status.Initialization.DataSecretCreated, false), nil
	})
}

// waitLeader waits until replica m logged taking the Lease and the Lease
// names a holder other than prev; it returns the holder. (controller-runtime's
// identity is hostname_uuid: both replicas share the hostname.)
func waitLeader(t *testing.T, k8s client.Client, m *manager, prev string) string {
	t.Helper()
	var holder string
	eventually(t, 30*time.Second, "replica "+m.name+" leading", func() (bool, error) {
		l := &coordinationv1.Lease{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: leaseNamespace, Name: "kubeadm-bootstrap-manager-leader-election-capi"}, l); err != nil {
			return false, err
		}
		holder = ptr.Deref(l.Spec.HolderIdentity, "")
		return holder != "" && holder != prev && strings.Contains(m.logs(), "Successfully acquired lease"), fmt.Errorf("holder %q", holder)
	})
	return holder
}

func newNamespace(t *testing.T, k8s client.Client, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// buildManager builds cmd/manager from the working tree as the image does.
func buildManager(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "manager")
	cmd := exec.Command(goCmd(), "build", "-trimpath", "-buildvcs=auto", "-o", bin, "./cmd/manager")
	cmd.Dir = testenv.ModuleRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/manager: %v\n%s", err, out)
	}
	return bin
}

func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func get(url string) (int, string, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// capiCRDs are testenv.CAPICRDs, failing the test when they cannot be read.
func capiCRDs(t *testing.T) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crds, err := testenv.CAPICRDs()
	if err != nil {
		t.Fatal(err)
	}
	return crds
}

// servingCert writes testenv's serving certificate into dir/serving-certs
// and returns that directory, a pool with its CA, and the CA's PEM.
func servingCert(t *testing.T, dir string) (string, *x509.CertPool, []byte) {
	t.Helper()
	certDir := filepath.Join(dir, "serving-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		t.Fatal(err)
	}
	caPEM := testenv.ServingCertificate(t, certDir)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("serving CA does not parse")
	}
	return certDir, pool, caPEM
}
