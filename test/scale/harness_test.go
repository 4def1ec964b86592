// Package scale_test runs whole manager binaries — nodeboot's cmd/manager
// and CABPK v1.14.2's, built from the pinned cluster-api module — as their
// own processes against a real kube-apiserver and etcd (envtest), the way a
// management cluster runs them. What is measured comes from outside the
// process under test: API writes from the API server's audit log (each
// manager authenticates as its own user), peak memory from the kernel
// (/proc/PID/status VmHWM), progress from a watch on the KubeadmConfigs.
//
// BenchmarkManagerScale (only with -bench) reconciles 5,000 worker
// KubeadmConfigs side by side; TestWatchFilterShards (in plain go test)
// proves two managers with different --watch-filter values split the
// Clusters between them without overlap.
package scale_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/test/testenv"
)

var scheme = runtime.NewScheme()

func init() {
	ctrllog.SetLogger(logr.Discard())
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme, addonsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
}

// apiServer is one envtest control plane whose audit log records the
// writes of the users named at start.
type apiServer struct {
	env   *envtest.Environment
	cfg   *rest.Config
	k8s   client.WithWatch
	dir   string
	audit string
}

// auditPolicy logs, at Metadata level, only the write requests of the
// managers' users: the test's own object creation stays out of the count.
func auditPolicy(users []string) string {
	return `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: ["` + strings.Join(users, `", "`) + `"]
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`
}

func startAPIServer(tb testing.TB, users ...string) *apiServer {
	tb.Helper()
	testenv.KubebuilderAssets(tb)
	dir := tb.TempDir()
	s := &apiServer{dir: dir, audit: filepath.Join(dir, "audit.log")}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy(users)), 0o600); err != nil {
		tb.Fatal(err)
	}
	crds := capiCRDs(tb)
	s.env = &envtest.Environment{CRDInstallOptions: envtest.CRDInstallOptions{CRDs: crds}, ErrorIfCRDPathMissing: true}
	s.env.ControlPlane.GetAPIServer().Configure().
		Set("audit-policy-file", policy).
		Set("audit-log-path", s.audit).
		Set("audit-log-format", "json").
		Set("audit-log-maxbackup", "0")
	cfg, err := s.env.Start()
	if err != nil {
		tb.Fatalf("envtest: %v", err)
	}
	tb.Cleanup(func() { _ = s.env.Stop() })
	// The test creates thousands of objects; its own client must not be
	// what limits the managers.
	cfg.QPS, cfg.Burst = 2000, 4000
	s.cfg = cfg
	s.k8s, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// user adds an API user in system:masters (as a manager's ServiceAccount
// bound to its ClusterRole would be, minus RBAC) and writes its kubeconfig.
func (s *apiServer) user(tb testing.TB, name string) (kubeconfigPath string, cfg *rest.Config) {
	tb.Helper()
	u, err := s.env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	kc, err := u.KubeConfig()
	if err != nil {
		tb.Fatal(err)
	}
	kubeconfigPath = filepath.Join(s.dir, name+".kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kc, 0o600); err != nil {
		tb.Fatal(err)
	}
	return kubeconfigPath, u.Config()
}

// auditEvent is the part of an audit.k8s.io/v1 Event the tests read.
type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// writes reads the completed write requests in the audit log from byte
// offset from on; it returns them and the offset of the end.
func (s *apiServer) writes(tb testing.TB, from int64) ([]auditEvent, int64) {
	tb.Helper()
	f, err := os.Open(s.audit)
	if os.IsNotExist(err) {
		return nil, 0
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		tb.Fatal(err)
	}
	var out []auditEvent
	r := bufio.NewReaderSize(f, 1<<20)
	off := from
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			// A partial last line is read again next time.
			break
		}
		off += int64(len(line))
		var e auditEvent
		if err := json.Unmarshal(line, &e); err != nil {
			tb.Fatalf("audit log line at %d: %v", off, err)
		}
		if e.Stage == "ResponseComplete" {
			out = append(out, e)
		}
	}
	return out, off
}

// byUser counts events per user name.
func byUser(events []auditEvent) map[string]int {
	m := map[string]int{}
	for _, e := range events {
		m[e.User.Username]++
	}
	return m
}

// breakdown counts events per verb and resource, for the log.
func breakdown(events []auditEvent) string {
	m := map[string]int{}
	for _, e := range events {
		r := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			r += "/" + e.ObjectRef.Subresource
		}
		m[e.Verb+" "+r]++
	}
	return fmt.Sprint(m)
}

// buildOnce maps a binary's name to its *built.
var buildOnce sync.Map

// TestMain removes the built binaries (some 90 MB each) after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	waitBuilds()
	buildOnce.Range(func(_, v any) bool {
		if b := v.(*built); b.path != "" {
			_ = os.RemoveAll(filepath.Dir(b.path))
		}
		return true
	})
	os.Exit(code)
}

type built struct {
	once sync.Once
	path string
	err  error
}

// binary builds a main package once per test process: nodeboot's
// ./cmd/manager from the working tree, or CABPK's from the module cache at
// the version go.mod pins (go build resolves it through this module's
// go.mod and go.sum, so its dependencies are nodeboot's exact versions).
func binary(tb testing.TB, name, pkg string) string {
	tb.Helper()
	b := build(name, pkg)
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}

// prebuilds are builds started ahead of the run that needs them.
var prebuilds sync.WaitGroup

// prebuild starts building a binary in the background.
func prebuild(name, pkg string) {
	prebuilds.Add(1)
	go func() {
		defer prebuilds.Done()
		build(name, pkg)
	}()
}

// waitBuilds waits for the builds prebuild started: a build running beside
// a timed run would take CPU from the manager measured.
func waitBuilds() { prebuilds.Wait() }

// build is binary without a testing.TB, so a goroutine can build a binary
// ahead of the run that needs it.
func build(name, pkg string) *built {
	v, _ := buildOnce.LoadOrStore(name, &built{})
	b := v.(*built)
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "nodeboot-scale-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, name)
		cmd := exec.Command(goCmd(), "build", "-trimpath", "-o", b.path, pkg)
		cmd.Dir = testenv.ModuleRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
		}
	})
	return b
}

func nodebootBinary(tb testing.TB) string {
	tb.Helper()
	return binary(tb, "nodeboot-manager", "./cmd/manager")
}

func cabpkBinary(tb testing.TB) string {
	tb.Helper()
	return binary(tb, "cabpk-manager", "sigs.k8s.io/cluster-api/bootstrap/kubeadm")
}

func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// process is one running manager.
type process struct {
	name                     string
	bin, kubeconfig, certDir string
	extra                    []string
	out                      *testenv.OutputBuffer
	starts                   int

	mu     sync.Mutex // cmd, health, diag and done change when a start is retried
	cmd    *exec.Cmd
	health string
	diag   string
	done   chan error
}

// maxStarts bounds the starts of one manager: a port freeAddr found free
// can be taken by another process before the manager binds it (make e2e
// runs beside the benchmarks in CI), and the manager then exits at once.
const maxStarts = 3

// startProcess runs bin with the flags every manager here shares (loopback
// probes and diagnostics, webhooks served with a throwaway certificate)
// plus extra.
func startProcess(tb testing.TB, name, bin, kubeconfig, certDir string, extra ...string) *process {
	tb.Helper()
	p := &process{name: name, bin: bin, kubeconfig: kubeconfig, certDir: certDir, extra: extra, out: &testenv.OutputBuffer{}}
	p.start(tb)
	tb.Cleanup(func() {
		p.mu.Lock()
		cmd, done := p.cmd, p.done
		p.mu.Unlock()
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
		err := <-done
		done <- err
		if tb.Failed() {
			tb.Logf("manager %s output (tail):\n%s", name, tail(p.out.String(), 40))
		}
	})
	return p
}

// start starts the manager on fresh ports.
func (p *process) start(tb testing.TB) {
	tb.Helper()
	health, diag := freeAddr(tb), freeAddr(tb)
	_, webhookPort, _ := net.SplitHostPort(freeAddr(tb))
	args := append([]string{
		"--kubeconfig=" + p.kubeconfig,
		"--health-addr=" + health,
		"--diagnostics-address=" + diag,
		"--insecure-diagnostics=true",
		"--webhook-port=" + webhookPort,
		"--webhook-cert-dir=" + p.certDir,
	}, p.extra...)
	cmd := exec.Command(p.bin, args...)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	p.mu.Lock()
	p.cmd, p.health, p.diag, p.done = cmd, health, diag, done
	p.mu.Unlock()
	p.starts++
}

func (p *process) diagAddr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.diag
}

// current is the running command and its channels, under mu.
func (p *process) current() (*exec.Cmd, string, chan error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd, p.health, p.done
}

func (p *process) waitReady(tb testing.TB) {
	tb.Helper()
	eventually(tb, 90*time.Second, "manager "+p.name+" ready", func() (bool, error) {
		_, health, done := p.current()
		select {
		case err := <-done:
			done <- err
			if p.starts < maxStarts && strings.Contains(p.out.String(), "address already in use") {
				tb.Logf("manager %s lost a port to another process (%v): starting it again", p.name, err)
				p.start(tb)
				return false, nil
			}
			tb.Fatalf("manager %s exited: %v\n%s", p.name, err, tail(p.out.String(), 40))
		default:
		}
		c := &http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get("http://" + health + "/readyz")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// peakRSSMB is the process's peak resident set size (VmHWM), in MiB.
func (p *process) peakRSSMB(tb testing.TB) float64 {
	tb.Helper()
	v, err := p.status("VmHWM:")
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// status reads one kB field of /proc/PID/status, in MiB.
func (p *process) status(field string) (float64, error) {
	cmd, _, _ := p.current()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == field && f[2] == "kB" {
			kb, err := strconv.ParseFloat(f[1], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, cmd.Process.Pid)
}

// requests sums the manager's client-go request counter
// (rest_client_requests_total) per HTTP method: its reads as well as its
// writes, to every API server it talks to.
func (p *process) requests() map[string]float64 {
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + p.diagAddr() + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "rest_client_requests_total{") {
			continue
		}
		i := strings.Index(l, `method="`)
		j := strings.LastIndexByte(l, ' ')
		if i < 0 || j < 0 {
			continue
		}
		method := l[i+len(`method="`):]
		method = method[:strings.IndexByte(method, '"')]
		v, err := strconv.ParseFloat(l[j+1:], 64)
		if err == nil {
			out[method] += v
		}
	}
	return out
}

// stop sends SIGTERM and waits for the exit, killing the process after
// 10s: how a manager shuts down is test/manager's business, not this one's.
func (p *process) stop(tb testing.TB) {
	tb.Helper()
	cmd, _, done := p.current()
	if cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		done <- err
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		tb.Logf("manager %s killed 10s after SIGTERM", p.name)
	}
}

// capiCRDs are testenv.CAPICRDs and nodeboot's FirstBootAddon CRD as the
// release ships it.
func capiCRDs(tb testing.TB) []*apiextensionsv1.CustomResourceDefinition {
	tb.Helper()
	crds, err := testenv.CAPICRDs()
	if err != nil {
		tb.Fatal(err)
	}
	own, _ := filepath.Glob(filepath.Join(testenv.ModuleRoot(), "config", "crd", "addons", "addons.nodeboot.dev_*.yaml"))
	if len(own) == 0 {
		tb.Fatal("no FirstBootAddon CRD in config/crd/addons")
	}
	for _, f := range own {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		crds = append(crds, crd)
	}
	return crds
}

// certSecrets are the fixed cluster certificates of the reference vectors,
// renamed and relabelled for cluster.
func certSecrets(tb testing.TB, ns, cluster string) []*corev1.Secret {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.VectorsDir(tb), "cc-join-cp-minimal-v1.33", "input.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []*corev1.Secret
	for _, doc := range bytes.Split(raw, []byte("\n---\n")) {
		var s corev1.Secret
		if err := yaml.Unmarshal(doc, &s); err != nil {
			tb.Fatal(err)
		}
		if s.Kind != "Secret" {
			continue
		}
		old := s.Labels[clusterv1.ClusterNameLabel]
		s.Name = cluster + strings.TrimPrefix(s.Name, old)
		s.Namespace = ns
		s.Labels = map[string]string{clusterv1.ClusterNameLabel: cluster}
		out = append(out, &s)
	}
	if len(out) != 4 {
		tb.Fatalf("expected the four cluster certificate Secrets, found %d", len(out))
	}
	return out
}

func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func eventually(tb testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// servingCert writes testenv's serving certificate for the webhook servers
// (CABPK's manager always starts one; nothing calls them here) and returns
// its directory.
func servingCert(tb testing.TB, dir string) string {
	tb.Helper()
	certDir := filepath.Join(dir, "serving-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		tb.Fatal(err)
	}
	testenv.ServingCertificate(tb, certDir)
	return certDir
}
