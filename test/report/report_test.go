package report_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/bootstrap"
	nodereportctrl "github.com/nodeboot/nodeboot/controllers/nodereport"
	"github.com/nodeboot/nodeboot/nodereport"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// failingKubeadm replaces the apply tools' kubeadm stub (it comes first in
// PATH): it prints what a real failure might, secrets included, and exits 3.
const failingKubeadm = "#!/bin/sh\n" +
	"echo '[preflight] Running pre-flight checks'\n" +
	"echo 'using token abcdef.0123456789abcdef with password=hunter2' >&2\n" +
	"echo 'error execution phase preflight: connection refused' >&2\n" +
	"exit 3\n"

// okKubeadm is the stub for the Ignition roots, which have none.
const okKubeadm = "#!/bin/sh\necho \"kubeadm $*\"\n"

// node is one machine of the test: its config's namespace, data and root.
type node struct {
	name, ns string
	ignition bool
	fail     bool
	data     []byte
	root     string
	out      string // what the tools and the flush printed
}

// TestBootstrapReport is issue 10 end to end: the manager with reporting on
// builds data for four first control-plane nodes (cloud-config and Ignition
// v3, each once with a kubeadm that succeeds and once with one that fails);
// the real cloud-init and the real Ignition engine run the data in chroots
// without network; the reports they spooled are flushed to the manager's
// endpoint over TLS; the KubeadmConfigs show NodeBootstrapped Succeeded or
// Failed naming kubeadm and its exit code, with a Warning Event carrying the
// tail redacted on the node; and no credential or key is in any log, Event
// or output.
func TestBootstrapReport(t *testing.T) {
	cloudinitApply := testenv.Tool(t, "cloudinit-apply")
	ignitionApply := testenv.Tool(t, "ignition-apply")
	testenv.RequireRoot(t)
	for _, tool := range []string{"curl", "unshare", "chroot"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed: %v", tool, err)
		}
	}
	began := time.Now()
	e := startEnv(t)
	e.startManager(t)
	t.Logf("envtest and the manager up in %s", time.Since(began).Round(time.Second))

	stub := bootstrapv1.File{Path: "/usr/local/sbin/kubeadm", Owner: "root:root", Permissions: "0755", Content: failingKubeadm}
	nodes := []*node{{name: "cloud-config ok"}, {name: "cloud-config fail", fail: true}, {name: "ignition ok", ignition: true}, {name: "ignition fail", ignition: true, fail: true}}
	for _, n := range nodes {
		spec := bootstrapv1.KubeadmConfigSpec{PreKubeadmCommands: []string{"echo pre"}, PostKubeadmCommands: []string{"echo post"}}
		var ann map[string]string
		if n.ignition {
			spec.Format = bootstrapv1.Ignition
			ann = map[string]string{bootstrap.AnnotationIgnitionVersion: "3.4.0"}
		}
		if n.fail {
			spec.Files = []bootstrapv1.File{stub}
		}
		n.ns = e.createInit(t, strings.ReplaceAll(n.name, " ", "-"), ann, spec)
	}
	for _, n := range nodes {
		n.data = e.data(t, n.ns)
	}
	t.Logf("bootstrap data for %d nodes after %s", len(nodes), time.Since(began).Round(time.Second))

	// cloud-init's two runs at once; then the Ignition nodes, in the same
	// Debian roots (bash, coreutils) with what cloud-init left of ours
	// removed. After each, the spools are checked and flushed.
	start := time.Now()
	run := func(ignition bool) {
		var wg sync.WaitGroup
		errs := make([]error, len(nodes))
		for i, n := range nodes {
			if n.ignition != ignition {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if n.ignition {
					errs[i] = runIgnition(n, ignitionApply)
				} else {
					errs[i] = runCloudInit(n, cloudinitApply)
				}
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: %v\n%s", nodes[i].name, err, nodes[i].out)
			}
		}
		for _, n := range nodes {
			if n.ignition == ignition {
				checkSpool(t, n)
				flush(t, n)
			}
		}
	}
	roots := []string{t.TempDir(), t.TempDir()}
	nodes[0].root, nodes[1].root = roots[0], roots[1]
	run(false)
	nodes[2].root, nodes[3].root = roots[0], roots[1]
	for _, r := range roots {
		for _, p := range []string{"/var/lib/nodeboot", "/etc/nodeboot", "/opt/nodeboot", "/run/cluster-api", "/run/nodeboot-report.lock", "/usr/local/sbin/kubeadm"} {
			if err := os.RemoveAll(filepath.Join(r, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	run(true)
	t.Logf("nodes ran and flushed in %s", time.Since(start).Round(time.Second))

	ctx := context.Background()
	for _, n := range nodes {
		var cond, ready *metav1.Condition
		eventually(t, 20*time.Second, n.name+": NodeBootstrapped", func() bool {
			kc := &bootstrapv1.KubeadmConfig{}
			if err := e.k8s.Get(ctx, client.ObjectKey{Namespace: n.ns, Name: "cp-0"}, kc); err != nil {
				return false
			}
			cond = conditions.Get(kc, nodereportctrl.NodeBootstrappedCondition)
			ready = conditions.Get(kc, bootstrapv1.KubeadmConfigReadyCondition)
			return cond != nil && cond.Reason != nodereportctrl.RunningReason && cond.Reason != nodereportctrl.PendingReason
		})
		t.Logf("%s: NodeBootstrapped %s %s: %s", n.name, cond.Status, cond.Reason, cond.Message)
		if !n.fail {
			if cond.Status != metav1.ConditionTrue || cond.Reason != nodereportctrl.SucceededReason {
				t.Errorf("%s: %s %s %q, want Succeeded", n.name, cond.Status, cond.Reason, cond.Message)
			}
			if ready == nil || ready.Status != metav1.ConditionTrue {
				t.Errorf("%s: Ready %+v, want True as CABPK sets it", n.name, ready)
			}
			continue
		}
		if cond.Status != metav1.ConditionFalse || cond.Reason != nodereportctrl.FailedReason || cond.Message != "kubeadm exited 3: error execution phase preflight: connection refused" {
			t.Errorf("%s: %s %s %q, want Failed naming kubeadm, exit 3 and its last line", n.name, cond.Status, cond.Reason, cond.Message)
		}
		if ready == nil || ready.Status != metav1.ConditionFalse || !strings.Contains(ready.Message, "NodeBootstrapped: kubeadm exited 3") {
			t.Errorf("%s: Ready %+v, want False naming the failed step (the Machine mirrors it)", n.name, ready)
		} else {
			t.Logf("%s: Ready %s %s: %s", n.name, ready.Status, ready.Reason, ready.Message)
		}
		var warning *corev1.Event
		eventually(t, 20*time.Second, n.name+": the Warning Event", func() bool {
			list := &corev1.EventList{}
			if err := e.k8s.List(ctx, list, client.InNamespace(n.ns)); err != nil {
				return false
			}
			for i := range list.Items {
				if ev := &list.Items[i]; ev.Type == corev1.EventTypeWarning && ev.Reason == "BootstrapFailed" {
					warning = ev
				}
			}
			return warning != nil
		})
		if !strings.HasPrefix(warning.Message, "kubeadm exited 3") || !strings.Contains(warning.Message, "[redacted") ||
			!strings.Contains(warning.Message, "Running pre-flight checks") || strings.Contains(warning.Message, "hunter2") {
			t.Errorf("%s: Warning Event %q, want the redacted log tail", n.name, warning.Message)
		}
	}

	scanSecrets(t, e, nodes)
	t.Logf("checked after %s", time.Since(began).Round(time.Second))
}

// checkSpool: what the node spooled is started, then the outcome, redacted.
func checkSpool(t *testing.T, n *node) {
	t.Helper()
	spool, _ := os.ReadDir(filepath.Join(n.root, nodereport.SpoolDir))
	var names []string
	for _, s := range spool {
		names = append(names, s.Name())
	}
	want := "1-started.json,3-succeeded.json"
	if n.fail {
		want = "1-started.json,2-failed.json"
	}
	if strings.Join(names, ",") != want {
		t.Fatalf("%s: spooled %v, want %s\n%s", n.name, names, want, n.out)
	}
	if !n.fail {
		return
	}
	raw, _ := os.ReadFile(filepath.Join(n.root, nodereport.SpoolDir, "2-failed.json"))
	var r nodereportctrl.Report
	if err := json.Unmarshal(raw, &r); err != nil || r.Step != "kubeadm" || r.ExitCode == nil || *r.ExitCode != 3 {
		t.Fatalf("%s: spooled failure %s", n.name, raw)
	}
	if strings.Contains(r.Log, "hunter2") || strings.Contains(r.Log, "abcdef.0123456789abcdef") || !strings.Contains(r.Log, "connection refused") {
		t.Fatalf("%s: the node did not redact its log tail: %q", n.name, r.Log)
	}
}

// flush is the operator's flush, from the host, which reaches the endpoint.
func flush(t *testing.T, n *node) {
	t.Helper()
	cmd := exec.Command("/bin/sh", filepath.Join(n.root, nodereport.ScriptPath), "flush")
	cmd.Env = append(os.Environ(), "NODEBOOT_REPORT_ROOT="+n.root)
	out, err := cmd.CombinedOutput()
	n.out += "\n== flush\n" + string(out)
	if err != nil {
		t.Fatalf("%s: flush: %v\n%s", n.name, err, out)
	}
}

// runCloudInit runs the data with the real cloud-init. A failing kubeadm
// fails the runcmd module and the tool's own kubeadm and sentinel checks:
// that is the point of the case, so only those may fail.
func runCloudInit(n *node, tool string) error {
	file := filepath.Join(n.root+"-data", "user-data")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(file))
	if err := os.WriteFile(file, n.data, 0o600); err != nil {
		return err
	}
	cmd := exec.Command(tool, n.root, file)
	if n.fail {
		cmd.Env = append(os.Environ(), "CI_ALLOW_FAILED_MODULES=scripts_user")
	}
	out, err := cmd.CombinedOutput()
	n.out = string(out)
	if !n.fail {
		return err
	}
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		return fmt.Errorf("cloudinit-apply: %w, want the failed kubeadm to fail its checks", err)
	}
	for _, line := range strings.Split(n.out, "\n") {
		if strings.Contains(line, "FAIL ") && !strings.Contains(line, "kubeadm but the stub was never called") && !strings.Contains(line, "sentinel") {
			return fmt.Errorf("cloudinit-apply failed a check other than kubeadm's: %s", line)
		}
	}
	return nil
}

// runIgnition applies the data with the real Ignition engine to a Debian
// root (one cloud-init ran in), then does what systemd would: runs the bootstrap unit's script, and
// when it fails the OnFailure= handler with the unit's exit status in
// MONITOR_EXIT_STATUS and the unit's output as its journal.
func runIgnition(n *node, tool string) error {
	if err := os.Chmod(n.root, 0o755); err != nil {
		return err
	}
	file := n.root + "-config.ign"
	defer os.Remove(file)
	if err := os.WriteFile(file, n.data, 0o600); err != nil {
		return err
	}
	out, err := exec.Command(tool, n.root, file).CombinedOutput()
	n.out = string(out)
	if err != nil {
		return fmt.Errorf("ignition-apply: %w", err)
	}
	for path, content := range map[string]string{
		"/usr/local/bin/kubeadm":    okKubeadm,
		"/usr/local/bin/journalctl": "#!/bin/sh\ncat /var/log/test-unit-output\n",
	} {
		if err := os.WriteFile(filepath.Join(n.root, path), []byte(content), 0o755); err != nil {
			return err
		}
	}
	for _, want := range []string{"/etc/systemd/system/nodeboot-bootstrap.service.d/10-nodeboot-report.conf", "/etc/systemd/system/nodeboot-report-failed@.service"} {
		if _, err := os.Stat(filepath.Join(n.root, want)); err != nil {
			return fmt.Errorf("Ignition did not write %s: %w", want, err)
		}
	}
	unit, err := os.ReadFile(filepath.Join(n.root, "/etc/systemd/system/nodeboot-report-failed@.service"))
	if err != nil {
		return err
	}
	handler := ""
	for _, line := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			handler = strings.ReplaceAll(v, "%i", "nodeboot-bootstrap.service")
		}
	}
	code, output := chroot(n.root, nil, "/bin/bash /etc/nodeboot/bootstrap.sh")
	n.out += "\n== bootstrap.sh (exit " + strconv.Itoa(code) + ")\n" + output
	if (code != 0) != n.fail {
		return fmt.Errorf("bootstrap.sh exited %d", code)
	}
	if code == 0 {
		return nil
	}
	if err := os.WriteFile(filepath.Join(n.root, "/var/log/test-unit-output"), []byte(output), 0o600); err != nil {
		return err
	}
	code, output = chroot(n.root, []string{"MONITOR_EXIT_STATUS=" + strconv.Itoa(code), "MONITOR_UNIT=nodeboot-bootstrap.service"}, handler)
	n.out += "\n== " + handler + "\n" + output
	if code != 0 {
		return fmt.Errorf("the OnFailure handler exited %d", code)
	}
	return nil
}

// chroot runs a command line in root with its own pid, mount and network
// namespaces (no network, no process left behind).
func chroot(root string, env []string, line string) (int, string) {
	vars := strings.Join(append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root"}, env...), " ")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--pid", "--net", "--fork", "--propagation", "private", "/bin/sh", "-c",
		`mount -t proc proc "$1/proc" && exec chroot "$1" /usr/bin/env -i `+vars+` `+line, "sh", root)
	out, err := cmd.CombinedOutput()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		return -1, string(out) + err.Error()
	}
	return 0, string(out)
}

// scanSecrets: no credential and no private key line of the test's Secrets
// is in the manager's logs, an Event, a condition or what the nodes and the
// flush printed.
func scanSecrets(t *testing.T, e *env, nodes []*node) {
	t.Helper()
	ctx := context.Background()
	var haystacks []string
	haystacks = append(haystacks, logs.String())
	var secrets []string
	for _, n := range nodes {
		haystacks = append(haystacks, n.out)
		list := &corev1.SecretList{}
		if err := e.k8s.List(ctx, list, client.InNamespace(n.ns)); err != nil {
			t.Fatal(err)
		}
		for _, s := range list.Items {
			switch {
			case s.Type == nodereportctrl.CredentialSecretType:
				secrets = append(secrets, string(s.Data[nodereportctrl.CredentialKey]))
			case len(s.Data["tls.key"]) > 0:
				for _, line := range strings.Split(string(s.Data["tls.key"]), "\n") {
					if len(line) >= 32 && !strings.HasPrefix(line, "-----") {
						secrets = append(secrets, line)
					}
				}
			}
		}
		events := &corev1.EventList{}
		if err := e.k8s.List(ctx, events, client.InNamespace(n.ns)); err != nil {
			t.Fatal(err)
		}
		for _, ev := range events.Items {
			haystacks = append(haystacks, ev.Message)
		}
		kc := &bootstrapv1.KubeadmConfig{}
		if err := e.k8s.Get(ctx, client.ObjectKey{Namespace: n.ns, Name: "cp-0"}, kc); err != nil {
			t.Fatal(err)
		}
		for _, c := range kc.Status.Conditions {
			haystacks = append(haystacks, c.Message)
		}
	}
	credentials := 0
	for _, s := range secrets {
		if len(s) >= 40 && !strings.Contains(s, "+") && !strings.Contains(s, "/") {
			credentials++
		}
	}
	if credentials < len(nodes) || len(logs.String()) == 0 {
		t.Fatalf("the scan found %d credentials for %d nodes and %d bytes of logs: it would prove nothing", credentials, len(nodes), len(logs.String()))
	}
	for _, s := range secrets {
		for _, h := range haystacks {
			if strings.Contains(h, s) {
				t.Fatalf("a Secret value appears in the logs, an Event, a condition or the nodes' output")
			}
		}
	}
	t.Logf("log scan: %d Secret values, %d bytes of manager logs, clean", len(secrets), len(logs.String()))
}
