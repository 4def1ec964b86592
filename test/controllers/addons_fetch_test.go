package controllers_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/kubeconfig"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/nodeboot/nodeboot/addons"
	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestAddonsFetchFallback is issue 15's fallback end to end, with real parts
// only: a Cluster with Cluster API's default RSA-2048 certificates (the
// reconciler generates them, as CABPK does), Flannel and NodeLocal DNSCache,
// and an Ignition v3 init node, whose data with the add-ons inline exceeds
// EC2's 16 KiB. The manager, with --addons-fetch-url set, takes the fallback
// on its own: the data fits, the KubeadmConfig says AddonsFetched, the
// manifests are in a fetch Secret it owns. The real Ignition engine applies
// the data; the node's apply step, run from what Ignition wrote, fetches the
// manifests over TLS from the manager's fetch endpoint (trusting only the CA
// in the data), verifies each sha256 and applies them to a real API server.
// The endpoint is reached through a TLS proxy of the test's, holding the
// serving certificate, as a load balancer in front of the manager would.
// Then the node's own check: the proxy changes the bytes the endpoint
// serves for a valid request, and the node's apply step (apply.sh) refuses
// them by their sha256 and applies nothing. Then the endpoint's check: a
// manifest changed in the fetch Secret is no longer served under its digest,
// and the node applies nothing either. Beside it, the same node on a Cluster annotated with a 64 KiB
// budget keeps its add-ons inline, and one with a budget annotation that is
// no number of bytes gets a condition naming the annotation.
func TestAddonsFetchFallback(t *testing.T) {
	ignitionApply := testenv.Tool(t, "ignition-apply")
	testenv.RequireRoot(t)
	assets := testenv.KubebuilderAssets(t)
	ctx := context.Background()
	ns := newNamespace(t, "addons-fetch")
	cluster := createCluster(t, ns, clusterOptions{network: addonNetwork, labels: map[string]string{addonLabel: "standard"}})
	for _, a := range standardAddons(ns) {
		create(t, a)
	}

	certDir := t.TempDir()
	ca := testenv.ServingCertificate(t, certDir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	proxy := startTamperProxy(t, certDir, ca, addr)
	opts := managerAddonOptions
	opts.Fetch = addonsctrl.FetchOptions{URL: "https://" + proxy.addr, CABundle: ca, Reader: k8s}
	// As cmd/manager runs it: the credential index is an informer of its own.
	idx := addonsctrl.NewFetchIndex(k8s)
	idx.RESTConfig, idx.Scheme = cfg, scheme
	server := &addonsctrl.FetchServer{Addr: addr, CertDir: certDir, Handler: &addonsctrl.FetchHandler{Credentials: idx, Reader: k8s}}
	budgets := map[string]string{"65536": newNamespace(t, "addons-budget"), "1e6": newNamespace(t, "addons-budget-invalid")}
	for value, bns := range budgets {
		c := createCluster(t, bns, clusterOptions{network: addonNetwork, labels: map[string]string{addonLabel: "standard"}})
		c.Annotations = map[string]string{addonsctrl.AnnotationMaxBytes: value}
		if err := k8s.Update(ctx, c); err != nil {
			t.Fatal(err)
		}
		for _, a := range standardAddons(bns) {
			create(t, a)
		}
	}
	startManager(t, managerOptions{provider: nodeboot, addons: &opts, namespaces: []string{ns, budgets["65536"], budgets["1e6"]},
		runnables: []manager.Runnable{idx, server}})
	for _, n := range []string{ns, budgets["65536"], budgets["1e6"]} {
		createIgnitionInit(t, n)
	}

	// A Cluster whose infrastructure takes 64 KiB keeps its add-ons inline;
	// one whose budget annotation is not a number of bytes gets a condition
	// naming the annotation and no data.
	inline := waitForData(t, budgets["65536"], "cp-0")
	if n := len(inline.Data["value"]); n <= 16384 || n > 65536 {
		t.Errorf("with a 64 KiB budget the data is %d bytes, want inline add-ons over 16 KiB", n)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: budgets["65536"], Name: addonsctrl.FetchSecretName("cp-0")}, &corev1.Secret{}); err == nil {
		t.Error("a fetch Secret for data within its Cluster's budget")
	}
	bad := waitForDataFailure(t, budgets["1e6"], "cp-0")
	if msg := conditions.Get(bad, bootstrapv1.KubeadmConfigDataSecretAvailableCondition).Message; !strings.Contains(msg, addonsctrl.AnnotationMaxBytes) || strings.Contains(msg, "1e6") {
		t.Errorf("invalid budget annotation: condition %q must name the annotation, not its value", msg)
	}

	data := waitForData(t, ns, "cp-0")
	if got := string(data.Data["format"]); got != "ignition" {
		t.Fatalf("format %q", got)
	}
	value := data.Data["value"]
	t.Logf("bootstrap data: %d bytes (budget %d)", len(value), opts.MaxBytes)
	if len(value) > opts.MaxBytes {
		t.Fatalf("bootstrap data is %d bytes, over the budget of %d", len(value), opts.MaxBytes)
	}
	caSecret := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName + "-ca"}, caSecret); err != nil {
		t.Fatal(err)
	}
	if !testenv.IsRSA2048(caSecret.Data["tls.key"]) {
		t.Fatal("the generated cluster CA is not RSA-2048: the test does not measure the default")
	}

	var cond *metav1.Condition
	eventually(t, 30*time.Second, "the AddonsFetched condition", func() (bool, error) {
		c, err := getConfig(ctx, ns, "cp-0")
		if err != nil {
			return false, err
		}
		cond = conditions.Get(c, nodebootv1.AddonsFetchedCondition)
		return cond != nil, nil
	})
	if cond.Status != metav1.ConditionTrue || cond.Reason != nodebootv1.OverBudgetReason || !strings.Contains(cond.Message, "cni, dns") {
		t.Fatalf("AddonsFetched: %s %s %q", cond.Status, cond.Reason, cond.Message)
	}
	t.Logf("AddonsFetched: %s", cond.Message)
	fetch := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: addonsctrl.FetchSecretName("cp-0")}, fetch); err != nil {
		t.Fatal(err)
	}
	if c := metav1.GetControllerOf(fetch); c == nil || c.Kind != "KubeadmConfig" || c.Name != "cp-0" || fetch.Type != addonsctrl.FetchSecretType {
		t.Fatalf("fetch Secret: type %s, controller %v", fetch.Type, c)
	}
	if strings.Contains(cond.Message, string(fetch.Data[addonsctrl.FetchTokenKey])) {
		t.Fatal("the condition carries the fetch credential")
	}

	// The node: Ignition writes the files, the bootstrap script runs the
	// apply step after kubeadm init.
	root := ignitionRoot(t, ignitionApply, value)
	addonDir := filepath.Join(root, addons.DefaultDir)
	step := applyStepOf(t, root)
	index, err := os.ReadFile(filepath.Join(addonDir, addons.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(index)), "\n") {
		f := strings.Split(line, "\t")
		// name, version, sha256, file, url, CA file, credential file: the
		// credential is not in the URL.
		if len(f) != 7 || !strings.HasPrefix(f[4], "https://"+proxy.addr+addonsctrl.FetchPath) || strings.Contains(f[4], "?") ||
			!strings.HasPrefix(f[5], "ca-") || !strings.HasPrefix(f[6], "token-") {
			t.Fatalf("index line is not a fetched add-on with the serving CA and a credential file: %q", addons.RedactURL(strings.Join(f[:min(len(f), 6)], "\t")))
		}
		if _, err := os.Stat(filepath.Join(addonDir, f[3])); !os.IsNotExist(err) {
			t.Fatalf("%s is in the bootstrap data: %v", f[3], err)
		}
	}
	kc := filepath.Join(t.TempDir(), "admin.conf")
	if err := os.WriteFile(kc, kubeconfig.FromEnvTestConfig(cfg, cluster), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: addons.RecordNamespace, Name: addons.RecordName}})
	})
	pristine := copyDir(t, addonDir)
	out, err := runStep(assets, step, addonDir, kc, 60)
	if err != nil {
		t.Fatalf("apply step: %v\n%s", err, out)
	}
	ds := &appsv1.DaemonSet{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "kube-flannel", Name: "kube-flannel-ds"}, ds); err != nil {
		t.Fatalf("Flannel was not applied: %v\n%s", err, out)
	}
	record := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: addons.RecordNamespace, Name: addons.RecordName}, record); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cni", "dns"} {
		if got := record.Data[name+".result"]; got != "applied" {
			t.Errorf("%s: recorded %q", name, got)
		}
	}
	if strings.Contains(out, string(fetch.Data[addonsctrl.FetchTokenKey])) {
		t.Error("the apply step logged the fetch credential")
	}

	if proxy.tampered.Load() != 0 {
		t.Fatal("the proxy changed a response before it was asked to")
	}
	if err := k8s.Delete(ctx, ds); err != nil {
		t.Fatal(err)
	}

	// The node's check: the endpoint serves the right bytes for a valid
	// request, and something between it and the node changes Flannel's.
	// The node must refuse them by their sha256, and apply nothing.
	proxy.tamper.Store(true)
	out, err = runStep(assets, step, copyDir(t, pristine), kc, 30)
	proxy.tamper.Store(false)
	if err == nil {
		t.Fatalf("apply step succeeded with a manifest changed on the way:\n%s", out)
	}
	if n := proxy.tampered.Load(); n == 0 {
		t.Fatalf("the proxy changed no response: the step did not fetch through it\n%s", out)
	}
	if !strings.Contains(out, "cni: ") || !strings.Contains(out, "refusing to apply anything") || strings.Contains(out, "cannot fetch") {
		t.Errorf("apply step output does not refuse the add-on by its sha256:\n%s", out)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "kube-flannel", Name: "kube-flannel-ds"}, ds); err == nil {
		t.Error("Flannel was applied from a manifest whose sha256 does not match")
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: addons.RecordNamespace, Name: addons.RecordName}, record); err != nil {
		t.Fatal(err)
	}
	if got := record.Data["cni.result"]; !strings.HasPrefix(got, "failed: sha256 mismatch") {
		t.Errorf("cni: recorded %q, want a sha256 mismatch", got)
	}
	if got := record.Data["dns.result"]; got == "applied" || !strings.HasPrefix(got, "not applied") {
		t.Errorf("dns: recorded %q after cni failed verification", got)
	}

	// The endpoint's check: a manifest changed in the fetch Secret behind
	// the data's back is no longer served under its digest, so the node
	// cannot fetch it and applies nothing.
	update(t, fetch, func() {
		for k, v := range fetch.Data {
			if k != addonsctrl.FetchTokenKey && strings.Contains(string(v), "kube-flannel-ds") {
				fetch.Data[k] = append(v, []byte("\n# changed\n")...)
			}
		}
	})
	// A short deadline: the node retries a failed fetch with backoff.
	out, err = runStep(assets, step, copyDir(t, pristine), kc, 5)
	if err == nil {
		t.Fatalf("apply step succeeded with a changed manifest:\n%s", out)
	}
	if !strings.Contains(out, "cni: cannot fetch") {
		t.Errorf("apply step output does not name the add-on it could not fetch:\n%s", out)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "kube-flannel", Name: "kube-flannel-ds"}, ds); err == nil {
		t.Error("Flannel was applied again from a changed manifest")
	}
}

// tamperProxy is a TLS reverse proxy to the fetch endpoint, serving with
// the endpoint's own certificate; while tamper is set it appends a line to
// every successful response that holds Flannel's DaemonSet.
type tamperProxy struct {
	addr     string
	tamper   atomic.Bool
	tampered atomic.Int32
}

func startTamperProxy(t *testing.T, certDir string, ca []byte, upstream string) *tamperProxy {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("serving CA: no certificate")
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	p := &tamperProxy{}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "https", Host: upstream})
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	rp.ModifyResponse = func(resp *http.Response) error {
		if !p.tamper.Load() || resp.StatusCode != http.StatusOK {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if bytes.Contains(body, []byte("kube-flannel-ds")) {
			body = append(body, "\n# changed on the way\n"...)
			p.tampered.Add(1)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

// createIgnitionInit creates the first control-plane Machine cp-0 of ns
// and its KubeadmConfig, Ignition v3.4.0.
func createIgnitionInit(t *testing.T, ns string) {
	t.Helper()
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "cp-0", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName, clusterv1.MachineControlPlaneLabel: ""}},
		Spec: clusterv1.MachineSpec{
			ClusterName:       clusterName,
			Version:           "v1.33.4",
			Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: "cp-0"}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachine", Name: "cp-0"},
		},
	}
	create(t, m)
	config := &bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{
			Name: "cp-0", Namespace: ns,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: clusterName},
			Annotations:     map[string]string{bootstrap.AnnotationIgnitionVersion: "3.4.0"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "cp-0", UID: m.UID}},
		},
		Spec: bootstrapv1.KubeadmConfigSpec{
			Format:             bootstrapv1.Ignition,
			Files:              []bootstrapv1.File{{Path: "/etc/motd", Content: "welcome", Permissions: "0644", Owner: "root:root"}},
			PreKubeadmCommands: []string{"echo pre"},
		},
	}
	create(t, config)
}

// ignitionRoot applies an Ignition config with the real engine to a fresh
// root and returns it.
func ignitionRoot(t *testing.T, tool string, config []byte) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{root, filepath.Dir(root)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "config.ign")
	if err := os.WriteFile(file, config, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tool, root, file).CombinedOutput(); err != nil {
		t.Fatalf("ignition-apply: %v\n%s", err, out)
	}
	return root
}

// applyStepOf finds the add-on step in the bootstrap script Ignition wrote:
// the whole line, as the script runs it (each command in a shell of its
// own, its text quoted), so the test runs what the node would.
func applyStepOf(t *testing.T, root string) string {
	t.Helper()
	want := "/bin/sh " + addons.DefaultDir + "/" + addons.ScriptFile + " "
	var step string
	_ = filepath.WalkDir(filepath.Join(root, "etc"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sh") || strings.HasPrefix(p, filepath.Join(root, addons.DefaultDir)) {
			return nil
		}
		raw, _ := os.ReadFile(p)
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(line, want) {
				step = strings.TrimSpace(line)
			}
		}
		return nil
	})
	if step == "" {
		t.Fatal("no add-on step in the bootstrap script Ignition wrote")
	}
	return step
}

// runStep runs the apply step as the node would, with the add-on directory
// mapped to dir, kubectl from the envtest assets and its deadline in seconds.
func runStep(assets, step, dir, kubeconfig string, timeout int) (string, error) {
	step = strings.Replace(step, addons.DefaultDir+"/", dir+"/", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", step)
	cmd.Env = append(os.Environ(), "PATH="+assets+":"+os.Getenv("PATH"),
		"NODEBOOT_ADDONS_KUBECONFIG="+kubeconfig, "NODEBOOT_ADDONS_TIMEOUT="+strconv.Itoa(timeout))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// copyDir copies the regular files of dir into a new directory.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), raw, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return to
}
