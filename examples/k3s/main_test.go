package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// The example's outputs are checked by the real consumers: cloud-init's
// schema, Ignition's validator, dash running the script in a Debian root,
// and cloud-init applying the cloud-config in that root. A test that
// needs a tool fails when it is missing; -short leaves them out.

const (
	testToken = "K10-example-token-0123456789abcdef"
	testKey   = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE4k3sExampleKeyOnlyForTests ops@example"
)

// outputs builds the command, runs it once for the whole test binary and
// returns the directory it wrote to.
var outputs = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "k3s-example-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "k3s-example")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", errors.New("go build: " + err.Error() + "\n" + string(out))
	}
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte(testToken+"\n"), 0o600); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "out")
	if b, err := exec.Command(bin, "-out", out, "-token-file", token, "-ssh-key", testKey).CombinedOutput(); err != nil {
		return "", errors.New("run: " + err.Error() + "\n" + string(b))
	}
	return out, nil
})

func outDir(t *testing.T) string {
	t.Helper()
	dir, err := outputs()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := outputs(); err == nil && dir != "" {
		os.RemoveAll(filepath.Dir(dir))
	}
	os.Exit(code)
}

func nodes() map[string]Node {
	base := Node{ServerURL: "https://192.0.2.10:6443", Token: testToken, K3sURL: "https://github.com/k3s-io/k3s/releases/download/v1.31.4%2Bk3s1/k3s", SSHKey: testKey}
	server := base
	server.Server = true
	return map[string]Node{"server": server, "agent": base}
}

// TestCommandWritesEveryFormat runs the built command: it writes each node
// in each format, owner-only because the data holds the token, and what it
// writes is what the library renders.
func TestCommandWritesEveryFormat(t *testing.T) {
	dir := outDir(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if fi, err := e.Info(); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600", e.Name(), fi.Mode(), err)
		}
	}
	want := []string{"agent.cloud-config", "agent.ign", "agent.sh", "server.cloud-config", "server.ign", "server.sh"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("wrote %v, want %v", names, want)
	}
	for name, n := range nodes() {
		data, err := Render(Plan(n))
		if err != nil {
			t.Fatal(err)
		}
		for suffix, b := range data {
			got, err := os.ReadFile(filepath.Join(dir, name+"."+suffix))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, b) {
				t.Errorf("%s.%s differs from the library's rendering", name, suffix)
			}
		}
	}
}

// TestPublicAPIOnly checks what a provider pays for importing nodeboot:
// the example names only the public packages (of Ignition, the front and
// the native dialect alone), and nothing it pulls in is kubeadm-,
// Cluster-API- or Kubernetes-client-shaped, or CABPK's Ignition 2.3.
func TestPublicAPIOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Imports, Deps []string }
	if err := json.Unmarshal(out, &pkg); err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, i := range pkg.Imports {
		if strings.HasPrefix(i, "github.com/nodeboot/nodeboot/") {
			ours = append(ours, strings.TrimPrefix(i, "github.com/nodeboot/nodeboot/"))
		}
	}
	sort.Strings(ours)
	if got := strings.Join(ours, " "); got != "provisioning provisioning/cloudinit provisioning/ignition provisioning/ignition/v3 provisioning/script" {
		t.Errorf("imports %s of nodeboot, want only its public provisioning API", got)
	}
	for _, d := range pkg.Deps {
		for _, bad := range []string{"sigs.k8s.io/", "k8s.io/", "github.com/nodeboot/nodeboot/bootstrap", "github.com/nodeboot/nodeboot/controllers", "github.com/nodeboot/nodeboot/api", "github.com/nodeboot/nodeboot/provisioning/ignition/legacy", "github.com/flatcar/", "kubeadm"} {
			if strings.HasPrefix(d, bad) || bad == "kubeadm" && strings.Contains(d, bad) {
				t.Errorf("the example depends on %s", d)
			}
		}
	}
}

func sharedTool(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: not running %s", name)
	}
	dir := os.Getenv("NODEBOOT_SHARED")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(wd, "..", "..", "..", "shared")
	}
	p := filepath.Join(dir, "tools", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("tool %s not found (set NODEBOOT_SHARED): %v", name, err)
	}
	return p
}

func files(t *testing.T, suffix string) []string {
	t.Helper()
	dir := outDir(t)
	return []string{filepath.Join(dir, "server."+suffix), filepath.Join(dir, "agent."+suffix)}
}

// runTool runs a tool once on every file and fails with its output.
func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(sharedTool(t, name), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	return string(out)
}

func TestCloudInitSchema(t *testing.T) {
	t.Parallel()
	fs := files(t, "cloud-config")
	out := runTool(t, "cloudinit-validate", append([]string{"--strict"}, fs...)...)
	for _, f := range fs {
		if !strings.Contains(out, "OK "+f) {
			t.Errorf("cloudinit-validate did not pass %s:\n%s", f, out)
		}
	}
}

func TestIgnitionValidate(t *testing.T) {
	t.Parallel()
	runTool(t, "ignition-validate", append([]string{"--spec", "3.4.0"}, files(t, "ign")...)...)
}

// TestCloudConfigBoots applies the server's cloud-config with Debian's
// cloud-init in a throwaway root: files, the ops account, the unit files
// and runcmd in order. k3s and systemctl are argument-recording stubs
// there: the image has k3s, so the install command downloads nothing (the
// sandbox has no network, and curl would fail the boot).
func TestCloudConfigBoots(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatal("cloudinit-apply needs root")
	}
	tool := sharedTool(t, "cloudinit-apply")
	root := t.TempDir()
	cmd := exec.Command(tool, root, files(t, "cloud-config")[0])
	cmd.Env = append(os.Environ(), "STUB_CMDS=k3s systemctl")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cloudinit-apply: %v\n%s", err, out)
	}
	calls := readFile(t, root, "/var/log/validators-stub-calls.log")
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(calls), "\n") {
		if f := strings.SplitN(l, " ", 2); len(f) == 2 {
			got = append(got, f[1])
		}
	}
	want := "systemctl daemon-reload|systemctl try-restart k3s.service|systemctl enable --now k3s.service|k3s kubectl wait --for=condition=Ready nodes --all --timeout=5m"
	if strings.Join(got, "|") != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	if readFile(t, root, Sentinel) != "success\n" {
		t.Error("no sentinel")
	}
	if got := readFile(t, root, manifestsDir+"/podinfo.yaml"); got != helmChart {
		t.Errorf("HelmChart manifest changed on the way:\n%s", got)
	}
}

func readFile(t *testing.T, root, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestScriptInChroot runs server.sh and then agent.sh with /bin/sh (dash)
// in an unpacked copy of the root cloudinit-apply caches.
func TestScriptInChroot(t *testing.T) {
	t.Parallel()
	root := unpackRoot(t)
	stub := "#!/bin/sh\nprintf '%s\\n' \"${0##*/} $*\" >> /var/log/stub-calls\n"
	for _, c := range []string{"k3s", "systemctl", "curl"} {
		if err := os.WriteFile(filepath.Join(root, "usr/local/bin", c), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"server", "agent"} {
		data, err := os.ReadFile(filepath.Join(outDir(t), name+".sh"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "nodeboot.sh"), data, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(root, Sentinel))
		cmd := exec.Command("unshare", "--mount", "--net", "--pid", "--fork", "chroot", root, "/nodeboot.sh")
		cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s.sh: %v\n%s", name, err, out)
		}
		p := Plan(nodes()[name])
		for _, f := range p.Files {
			if got := readFile(t, root, f.Path); got != f.Content {
				t.Errorf("%s: %s has other content", name, f.Path)
			}
			fi, err := os.Stat(filepath.Join(root, f.Path))
			if err != nil || fi.Mode().Perm() != 0o600 || fi.Sys().(*syscall.Stat_t).Uid != 0 {
				t.Errorf("%s: %s: mode %v, want 0600 and root (%v)", name, f.Path, fi.Mode(), err)
			}
		}
		u := p.Units[0]
		if readFile(t, root, "/etc/systemd/system/"+u.Name) != u.Contents || readFile(t, root, "/etc/systemd/system/"+u.Name+".d/10-nodeboot.conf") != u.DropIns[0].Contents {
			t.Errorf("%s: unit or drop-in differs", name)
		}
		if readFile(t, root, Sentinel) != "success\n" {
			t.Errorf("%s: no sentinel", name)
		}
		if got := readFile(t, root, "/home/ops/.ssh/authorized_keys"); !strings.HasPrefix(got, testKey+"\n") {
			t.Errorf("%s: authorized_keys %q", name, got)
		}
	}
	// The image has k3s (a stub), so nothing is downloaded; the bootstrap
	// command enables and starts the unit.
	if got := readFile(t, root, "/var/log/stub-calls"); got != "systemctl enable --now k3s.service\nk3s kubectl wait --for=condition=Ready nodes --all --timeout=5m\nsystemctl enable --now k3s-agent.service\n" {
		t.Errorf("stub calls:\n%s", got)
	}
	if got := readFile(t, root, "/etc/sudoers.d/90-nodeboot-users"); got != "ops ALL=(ALL) NOPASSWD: ALL\n" {
		t.Errorf("sudo rules %q", got)
	}
}

// unpackRoot unpacks the Debian root cloudinit-apply caches (building it
// with the tool on a machine that has none).
func unpackRoot(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("running the script in a chroot needs root")
	}
	tool := sharedTool(t, "cloudinit-apply")
	cache := os.Getenv("VALIDATORS_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			base = filepath.Join(os.Getenv("HOME"), ".cache")
		}
		cache = filepath.Join(base, "validators")
	}
	tarball := filepath.Join(cache, "bookworm-cloudinit-rootfs.tar.gz")
	if _, err := os.Stat(tarball); err != nil {
		dir := t.TempDir()
		ud := filepath.Join(dir, "user-data")
		if err := os.WriteFile(ud, []byte("#cloud-config\n{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(tool, filepath.Join(dir, "root"), ud).CombinedOutput(); err != nil {
			t.Fatalf("cloudinit-apply (to build the cached root): %v\n%s", err, out)
		}
	}
	root := t.TempDir()
	cmd := exec.Command("tar", "--numeric-owner", "-xzpf", tarball, "-C", root,
		"--exclude=./usr/lib/python3*", "--exclude=./usr/share/doc", "--exclude=./usr/share/man", "--exclude=./usr/share/locale")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unpack root: %v\n%s", err, out)
	}
	return root
}
