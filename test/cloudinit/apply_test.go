package cloudinit_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// boot applies user data with Debian's real cloud-init in a throwaway root
// (four boot stages, kubeadm replaced by an argument-recording stub) and
// returns the root, the tool's report and whether all its checks passed.
// env adds to the tool's environment (STUB_CMDS), so that boots can run in
// parallel: each is a mostly single-threaded Python process tree.
func boot(t *testing.T, userData []byte, env ...string) (root, report string, passed bool) {
	t.Helper()
	testenv.RequireRoot(t)
	tool := testenv.Tool(t, "cloudinit-apply")
	root = filepath.Join(t.TempDir(), "root")
	var out bytes.Buffer
	cmd := exec.Command(tool, root, writeTemp(t, "user-data", userData))
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(), env...)
	err := cmd.Run()
	if ee := (*exec.ExitError)(nil); err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 1) {
		t.Fatalf("cloudinit-apply could not run: %v\n%s", err, out.String())
	}
	t.Logf("cloudinit-apply:\n%s", out.String())
	return root, out.String(), err == nil
}

func readIn(t *testing.T, root, path string) (string, os.FileMode) {
	t.Helper()
	p := filepath.Join(root, path)
	data, err := os.ReadFile(p)
	require.NoError(t, err, "%s was not written", path)
	st, err := os.Stat(p)
	require.NoError(t, err)
	return string(data), st.Mode().Perm()
}

func stubCalls(t *testing.T, root string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "var/log/validators-stub-calls.log"))
	require.NoError(t, err, "kubeadm was never called")
	var calls []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		_, rest, _ := strings.Cut(l, " ") // drop the timestamp
		calls = append(calls, strings.Join(strings.Fields(rest), " "))
	}
	return calls
}

func hasUser(t *testing.T, root, name string) bool {
	t.Helper()
	passwd, _ := readIn(t, root, "etc/passwd")
	return strings.Contains("\n"+passwd, "\n"+name+":")
}

func TestBootInitControlPlane(t *testing.T) {
	t.Parallel()
	input, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(), "cmd", "nodeboot", "example.yaml"))
	require.NoError(t, err)
	root, _, ok := boot(t, render(t, input, false).Data)
	require.True(t, ok, "cloud-init did not apply the init node's user data cleanly")
	require.Equal(t, []string{"kubeadm init --config /run/kubeadm/kubeadm.yaml"}, stubCalls(t, root))
	content, mode := readIn(t, root, "etc/sysctl.d/90-kubernetes.conf")
	require.Equal(t, "net.ipv4.ip_forward = 1\nnet.bridge.bridge-nf-call-iptables = 1\n", content)
	require.Equal(t, os.FileMode(0o644), mode)
	_, mode = readIn(t, root, "etc/kubernetes/pki/ca.key")
	require.Equal(t, os.FileMode(0o600), mode, "private keys are readable by root only")
	kubeadm, _ := readIn(t, root, "run/kubeadm/kubeadm.yaml")
	require.True(t, strings.HasPrefix(kubeadm, "---\napiServer:"), "kubeadm config written as rendered")
	require.True(t, hasUser(t, root, "ops"))
	sudoers, _ := readIn(t, root, "etc/sudoers.d/90-cloud-init-users")
	require.Contains(t, strings.Split(sudoers, "\n"), "ops ALL=(ALL) NOPASSWD:ALL")
	readIn(t, root, "run/cluster-api/bootstrap-success.complete")
}

func TestBootJoinControlPlane(t *testing.T) {
	t.Parallel()
	v := filepath.Join(testenv.VectorsDir(t), "cc-join-cp-minimal-v1.33")
	root, _, ok := boot(t, renderVector(t, v, false).Data)
	require.True(t, ok)
	require.Equal(t, []string{"kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml"}, stubCalls(t, root))
	_, mode := readIn(t, root, "etc/kubernetes/pki/sa.key")
	require.Equal(t, os.FileMode(0o600), mode)
	readIn(t, root, "run/cluster-api/bootstrap-success.complete")
}

func TestBootJoinWorker(t *testing.T) {
	t.Parallel()
	v := filepath.Join(testenv.VectorsDir(t), "cc-join-worker-contentfrom-passwdfrom-v1.34")
	root, _, ok := boot(t, renderVector(t, v, false).Data)
	require.True(t, ok)
	calls := stubCalls(t, root)
	require.Len(t, calls, 1)
	require.True(t, strings.HasPrefix(calls[0], "kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml"), calls[0])
	join, _ := readIn(t, root, "run/kubeadm/kubeadm-join-config.yaml")
	require.Contains(t, join, "node.cluster.x-k8s.io/uninitialized", "workers join tainted")
	readIn(t, root, "run/cluster-api/bootstrap-success.complete")
}

// TestBootJinjaHazard: CABPK's bytes for a Raw file holding Go-template braces
// make cloud-init run nothing; the corrections annotation writes it literally.
func TestBootJinjaHazard(t *testing.T) {
	t.Parallel()
	v := filepath.Join(testenv.VectorsDir(t), "cc-join-worker-template-kcp-v1.33")
	plain := renderVector(t, v, false)
	require.NotEmpty(t, plain.Warnings)
	root, report, ok := boot(t, plain.Data)
	require.False(t, ok, "CABPK's output was expected to fail under cloud-init")
	require.Contains(t, report, "JinjaTemplatePartHandler", "the failure is cloud-init's jinja step")
	_, err := os.Stat(filepath.Join(root, "run/cluster-api/bootstrap-success.complete"))
	require.True(t, os.IsNotExist(err), "nothing runs, so no sentinel")

	root, _, ok = boot(t, renderVector(t, v, true).Data)
	require.True(t, ok, "corrected output must apply cleanly")
	raw, _ := readIn(t, root, "etc/capi/raw")
	require.Equal(t, "{{ .controlPlane.version }} stays literal\n", raw)
	versions, _ := readIn(t, root, "etc/capi/versions")
	// As CABPK rendered it for this vector (its bootstrap-data, lines 7-8).
	require.Equal(t, "control plane: v1.34.2\nhas-cp\n", versions)
	readIn(t, root, "run/cluster-api/bootstrap-success.complete")
}

// TestBootNonKubeadmPlan: a Plan built without anything kubeadm-shaped (a k3s
// agent) renders and boots, so other bootstrap providers can reuse the renderer.
func TestBootNonKubeadmPlan(t *testing.T) {
	t.Parallel()
	plan := &provisioning.Plan{
		Role: provisioning.RoleJoinWorker,
		Files: []provisioning.File{{Path: "/etc/rancher/k3s/config.yaml", Owner: "root:root", Permissions: "0600",
			Content: "server: https://192.0.2.10:6443\n"}},
		Users:    []provisioning.User{{Name: "k3s-admin", Groups: "adm"}},
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "k3s agent --config /etc/rancher/k3s/config.yaml"}},
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
	}
	p, err := provisioning.Get("cloud-config")
	require.NoError(t, err)
	out, err := p.Render(plan, provisioning.Options{})
	require.NoError(t, err)
	root, _, ok := boot(t, out.Data, "STUB_CMDS=k3s")
	require.True(t, ok)
	require.Equal(t, []string{"k3s agent --config /etc/rancher/k3s/config.yaml"}, stubCalls(t, root))
	content, mode := readIn(t, root, "etc/rancher/k3s/config.yaml")
	require.Equal(t, "server: https://192.0.2.10:6443\n", content)
	require.Equal(t, os.FileMode(0o600), mode)
	require.True(t, hasUser(t, root, "k3s-admin"))
	readIn(t, root, "run/cluster-api/bootstrap-success.complete")
}
