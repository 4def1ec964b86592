//go:build e2e

// Package e2e boots Kubernetes from nodeboot's data, offline, on one
// machine: a management side (envtest's kube-apiserver and etcd, Cluster
// API's own core manager built from the pinned module, the nodeboot
// manager binary with bootstrap reports and the add-on fetch endpoint on,
// and the test's infrastructure provider) and workload clusters whose nodes
// are systemd containers that run the bootstrap data as a cloud VM would
// (package lab). Everything the nodes run is built from the Go module proxy
// and Debian packages by test/e2e/assets/build.sh.
//
//	make e2e        # builds or reuses the assets, then go test -tags e2e ./test/e2e/
//
// The whole test runs in network and mount namespaces of its own (TestMain
// re-executes it under unshare): the management processes and the node
// bridge live there, and nothing routes out.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	addonsv1beta2 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/test/e2e/infra"
	"github.com/nodeboot/nodeboot/test/e2e/lab"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// Ports the nodeboot manager serves nodes on, on the lab bridge's address.
const (
	reportPort = 9445
	fetchPort  = 9444
)

var scheme = runtime.NewScheme()

func init() {
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme,
		bootstrapv1.AddToScheme, addonsv1beta2.AddToScheme, nodebootv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
}

// suite is the management side every scenario shares.
type suite struct {
	lab       *lab.Lab
	env       *envtest.Environment
	cfg       *rest.Config
	c         client.Client
	provider  *infra.Provider
	versions  map[string]string
	artifacts string
	tools     string
	kubectl   string
	procs     []*process
	stopInfra context.CancelFunc
}

var s *suite

func TestMain(m *testing.M) {
	if os.Getenv(lab.EnvInside) != "1" {
		// Outside the lab: everything that needs the module proxy or the
		// Debian mirror happens here, before the network is gone.
		if err := prepare(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			os.Exit(1)
		}
	}
	code, inside := lab.Reexec()
	if !inside {
		os.Exit(code)
	}
	var err error
	s, err = setup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: setup: %v\n", err)
		if s != nil {
			s.teardown()
		}
		os.Exit(1)
	}
	code = m.Run()
	s.teardown()
	fmt.Fprintf(os.Stderr, "e2e: logs of every node and process: %s\n", s.artifacts)
	os.Exit(code)
}

// prepare builds (or finds cached) what the lab runs and passes it on in
// the environment: the node assets, the envtest binaries, the artifacts
// directory and the two manager binaries.
func prepare() error {
	id := make([]byte, 3)
	_, _ = rand.Read(id)
	runID := hex.EncodeToString(id)
	root := testenv.ModuleRoot()
	artifacts := os.Getenv("NODEBOOT_E2E_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(os.TempDir(), "nodeboot-e2e-"+runID)
	}
	if err := os.MkdirAll(filepath.Join(artifacts, "bin"), 0o755); err != nil {
		return err
	}
	tools := os.Getenv("NODEBOOT_SHARED_TOOLS")
	if tools == "" {
		tools = filepath.Join(root, "..", "shared", "tools")
	}
	set := map[string]string{"NODEBOOT_E2E_ARTIFACTS": artifacts, "NODEBOOT_SHARED_TOOLS": tools, "NODEBOOT_E2E_RUN_ID": runID}
	if os.Getenv("NODEBOOT_E2E_ASSETS") == "" {
		out, err := runScript(filepath.Join(root, "test", "e2e", "assets", "build.sh"))
		if err != nil {
			return fmt.Errorf("test/e2e/assets/build.sh: %w", err)
		}
		set["NODEBOOT_E2E_ASSETS"] = out
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		out, err := runScript(filepath.Join(tools, "envtest-assets.sh"))
		if err != nil {
			return fmt.Errorf("envtest-assets.sh: %w", err)
		}
		set["KUBEBUILDER_ASSETS"] = out
	}
	// The Ignition engine boots the Ignition nodes; ../shared/tools builds
	// it on first use from the module proxy, which the lab cannot reach.
	warm, err := os.MkdirTemp("", "e2e-ignition-warm")
	if err != nil {
		return err
	}
	defer os.RemoveAll(warm)
	cfg := filepath.Join(warm, "config.ign")
	if err := os.WriteFile(cfg, []byte(`{"ignition":{"version":"3.4.0"}}`), 0o600); err != nil {
		return err
	}
	apply := exec.Command(filepath.Join(tools, "ignition-apply"), filepath.Join(warm, "root"), cfg)
	if out, err := apply.CombinedOutput(); err != nil {
		return fmt.Errorf("ignition-apply (warming the Ignition engine): %w\n%s", err, out)
	}
	for name, pkg := range map[string]string{"capi-core": "sigs.k8s.io/cluster-api/core", "nodeboot-manager": "./cmd/manager"} {
		if _, err := goBuild(filepath.Join(artifacts, "bin"), name, pkg); err != nil {
			return err
		}
	}
	for k, v := range set {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

func setup() (*suite, error) {
	runID := os.Getenv("NODEBOOT_E2E_RUN_ID")
	st := &suite{artifacts: os.Getenv("NODEBOOT_E2E_ARTIFACTS"), tools: os.Getenv("NODEBOOT_SHARED_TOOLS")}
	root := testenv.ModuleRoot()
	assets := os.Getenv("NODEBOOT_E2E_ASSETS")
	var err error
	if st.versions, err = readEnvFile(filepath.Join(assets, "versions.env")); err != nil {
		return nil, err
	}
	st.kubectl = filepath.Join(assets, "bin", "kubectl")

	if st.lab, err = lab.New(assets, filepath.Join(st.artifacts, "lab"), runID); err != nil {
		return nil, err
	}

	// The management cluster.
	crds, err := testenv.CAPICRDs()
	if err != nil {
		return st, err
	}
	addonCRD := &apiextensionsv1.CustomResourceDefinition{}
	raw, err := os.ReadFile(filepath.Join(root, "config", "crd", "addons", "addons.nodeboot.dev_firstbootaddons.yaml"))
	if err != nil {
		return st, err
	}
	if err := yaml.UnmarshalStrict(raw, addonCRD); err != nil {
		return st, err
	}
	crds = append(append(crds, addonCRD), infra.CRDs()...)
	st.env = &envtest.Environment{CRDInstallOptions: envtest.CRDInstallOptions{CRDs: crds}, ErrorIfCRDPathMissing: true}
	// The lab namespace has no default route (nothing leaves it), so the
	// API server is told its address instead of guessing it from a route.
	st.env.ControlPlane.GetAPIServer().Configure().Set("advertise-address", st.lab.Gateway().String())
	if st.cfg, err = st.env.Start(); err != nil {
		return st, fmt.Errorf("envtest: %w", err)
	}
	if st.c, err = client.New(st.cfg, client.Options{Scheme: scheme}); err != nil {
		return st, err
	}
	user, err := st.env.AddUser(envtest.User{Name: "e2e-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return st, err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return st, err
	}
	kubeconfig := filepath.Join(st.artifacts, "management.kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return st, err
	}

	// Managers: Cluster API's core and nodeboot's, as binaries.
	bin := filepath.Join(st.artifacts, "bin")
	capiCore, nodeboot := filepath.Join(bin, "capi-core"), filepath.Join(bin, "nodeboot-manager")
	certDir := filepath.Join(st.artifacts, "serving-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return st, err
	}
	gw := st.lab.Gateway().String()
	if _, err := testenv.WriteServingCertificate(certDir, net.ParseIP(gw)); err != nil {
		return st, err
	}
	core := &process{name: "capi-core", health: freeAddr()}
	core.cmd = exec.Command(capiCore,
		"--webhook-cert-dir="+certDir, "--webhook-port="+port(freeAddr()),
		"--health-addr="+core.health, "--diagnostics-address="+freeAddr(), "--insecure-diagnostics",
		"--leader-elect=false")
	core.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	nb := &process{name: "nodeboot-manager", health: freeAddr()}
	nb.cmd = exec.Command(nodeboot,
		"--kubeconfig="+kubeconfig,
		"--webhook-cert-dir="+certDir, "--webhook-port="+port(freeAddr()),
		"--health-addr="+nb.health, "--diagnostics-address="+freeAddr(), "--insecure-diagnostics",
		"--feature-gates=KubeadmBootstrapFormatIgnition=true",
		fmt.Sprintf("--bootstrap-report-url=https://%s:%d", gw, reportPort),
		fmt.Sprintf("--bootstrap-report-bind-address=%s:%d", gw, reportPort),
		fmt.Sprintf("--addons-fetch-url=https://%s:%d", gw, fetchPort),
		fmt.Sprintf("--addons-fetch-bind-address=%s:%d", gw, fetchPort),
	)
	for _, p := range []*process{core, nb} {
		if err := p.start(st.artifacts); err != nil {
			return st, err
		}
		st.procs = append(st.procs, p)
	}
	for _, p := range []*process{core, nb} {
		if err := p.waitReady(90 * time.Second); err != nil {
			return st, err
		}
	}

	// The infrastructure provider, in this process.
	logFile, err := os.Create(filepath.Join(st.artifacts, "infra-provider.log"))
	if err != nil {
		return st, err
	}
	ctrllog.SetLogger(zap.New(zap.WriteTo(logFile), zap.UseDevMode(false)))
	mgr, err := ctrl.NewManager(st.cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptrTo(true)},
	})
	if err != nil {
		return st, err
	}
	st.provider = &infra.Provider{Client: mgr.GetClient(), Lab: st.lab, IgnitionApply: filepath.Join(st.tools, "ignition-apply"), WorkerAddressFrom: 100}
	if err := st.provider.SetupWithManager(mgr); err != nil {
		return st, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	st.stopInfra = cancel
	go func() { _ = mgr.Start(ctx) }()
	return st, nil
}

func (st *suite) teardown() {
	if st.stopInfra != nil {
		st.stopInfra()
	}
	if st.lab != nil {
		st.lab.StopAll()
	}
	for _, p := range st.procs {
		p.stop()
	}
	if st.env != nil {
		_ = st.env.Stop()
	}
}

func ptrTo[T any](v T) *T { return &v }

// runScript runs a script whose last stdout line is a directory.
func runScript(path string, args ...string) (string, error) {
	cmd := exec.Command(path, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

func readEnvFile(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			out[k] = v
		}
	}
	return out, nil
}

// goBuild builds a main package of this module or of a module go.mod pins,
// with the flags test/scale uses, so the Go build cache serves both.
func goBuild(dir, name, pkg string) (string, error) {
	out := filepath.Join(dir, name)
	g := os.Getenv("GO")
	if g == "" {
		g = "go"
	}
	cmd := exec.Command(g, "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = testenv.ModuleRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return out, nil
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// process is a management binary the suite runs.
type process struct {
	name   string
	cmd    *exec.Cmd
	health string
	log    string
	done   chan error
}

func (p *process) start(dir string) error {
	p.log = filepath.Join(dir, p.name+".log")
	f, err := os.Create(p.log)
	if err != nil {
		return err
	}
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	p.done = make(chan error, 1)
	go func() {
		p.done <- p.cmd.Wait()
		f.Close()
	}()
	return nil
}

func (p *process) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	c := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("%s exited: %w\n%s", p.name, err, tail(p.log, 40))
		default:
		}
		if resp, err := c.Get("http://" + p.health + "/readyz"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s\n%s", p.name, timeout, tail(p.log, 40))
}

func (p *process) stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// errNotYet marks a condition polled again.
var errNotYet = errors.New("not yet")

// eventually polls cond until it returns true, an error other than
// errNotYet, or the timeout; the last reason is in the failure.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, why, err := cond()
		if err != nil && !errors.Is(err, errNotYet) {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if why != "" {
			last = why
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s (last: %s)", what, timeout, last)
		}
		time.Sleep(2 * time.Second)
	}
}
