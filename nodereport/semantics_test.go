package nodereport_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/nodereport"
	"github.com/nodeboot/nodeboot/provisioning"
)

// commandsPlan has pre commands that depend on each other's shell state
// (an export, a cd), one that fails with 4, the bootstrap command and a post
// command; every command leaves a trace in $TRACE.
func commandsPlan() *provisioning.Plan {
	pre := provisioning.NewPath("spec", "preKubeadmCommands")
	post := provisioning.NewPath("spec", "postKubeadmCommands")
	return &provisioning.Plan{
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePre, Script: `export GREETING=hello; echo pre0 >> "$TRACE"`, Origin: pre.Index(0)},
			{Phase: provisioning.PhasePre, Script: `cd "$WORK" && echo "pre1 $GREETING" >> "$TRACE"`, Origin: pre.Index(1)},
			{Phase: provisioning.PhasePre, Script: `[ "$(pwd)" = "$WORK" ] && echo pre2 >> "$TRACE" && sh -c 'echo "kubeadm: command not found; password: hunter2" >&2; exit 4'`, Origin: pre.Index(2)},
			{Phase: provisioning.PhaseBootstrap, Script: `echo kubeadm >> "$TRACE"`},
			{Phase: provisioning.PhasePost, Script: `echo post0 >> "$TRACE"`, Origin: post.Index(0)},
		},
	}
}

// runScript writes the reporter's files into a root, builds the script the
// target runs from the Plan's commands (cloud-init: one sh script; Ignition:
// bash under set -e, sentinel after the bootstrap command), and runs it.
func runScript(t *testing.T, shell string, target nodereport.Target, failFast bool) (root, trace string, code int) {
	t.Helper()
	plan := commandsPlan()
	if err := nodereport.Apply(plan, nodereport.Options{URL: "https://127.0.0.1:1/r", Credential: credential, FailFast: failFast, Target: target}); err != nil {
		t.Fatal(err)
	}
	root = t.TempDir()
	for _, f := range plan.Files {
		writeFile(t, filepath.Join(root, f.Path), f)
	}
	sentinel := filepath.Join(root, plan.Sentinel)
	var lines []string
	if target == nodereport.CloudInit {
		lines = append(lines, "#!/bin/sh")
	} else {
		lines = append(lines, "#!/bin/bash", "set -e")
	}
	for _, phase := range []provisioning.Phase{provisioning.PhasePre, provisioning.PhaseBootstrap, provisioning.PhasePost} {
		for _, c := range plan.CommandsIn(phase) {
			s := c.Script
			if phase == provisioning.PhaseBootstrap {
				s += " && mkdir -p " + filepath.Dir(sentinel) + " && echo success > " + sentinel
			}
			lines = append(lines, strings.ReplaceAll(s, nodereport.ScriptPath, filepath.Join(root, nodereport.ScriptPath)))
		}
	}
	file := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	trace = filepath.Join(t.TempDir(), "trace")
	work := t.TempDir()
	var cmd *exec.Cmd
	switch shell {
	case "busybox":
		cmd = exec.Command(lookPath(t, "busybox"), "sh", file)
	default:
		cmd = exec.Command(lookPath(t, shell), file)
	}
	// Reports are only spooled: this test is about the commands.
	cmd.Env = append(os.Environ(), "TRACE="+trace, "WORK="+work, "NODEBOOT_REPORT_ROOT="+root, "NODEBOOT_REPORT_NO_SEND=1")
	out, err := cmd.CombinedOutput()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), credential) {
		t.Errorf("the script printed the credential:\n%s", out)
	}
	raw, _ := os.ReadFile(trace)
	return root, strings.TrimSpace(string(raw)), code
}

func spooled(t *testing.T, root, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, nodereport.SpoolDir, name))
	if err != nil {
		return nil
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v: %s", name, err, raw)
	}
	return m
}

// TestCloudInitSemantics: the wrapped runcmd script keeps CABPK's
// semantics (shell state carries over, every command runs, the script's
// status is the last command's) and reports the first failing step; with
// fail-fast it stops there.
func TestCloudInitSemantics(t *testing.T) {
	for _, shell := range shells(t) {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			root, trace, code := runScript(t, shell, nodereport.CloudInit, false)
			if trace != "pre0\npre1 hello\npre2\nkubeadm\npost0" || code != 0 {
				t.Fatalf("without fail-fast: status %d, trace:\n%s", code, trace)
			}
			f := spooled(t, root, "2-failed.json")
			if f == nil || f["step"] != "preKubeadmCommands[2]" || f["exitCode"] != float64(4) {
				t.Fatalf("failed report %v, want preKubeadmCommands[2] exit 4", f)
			}
			if spooled(t, root, "1-started.json") == nil || spooled(t, root, "3-succeeded.json") != nil {
				t.Fatal("want started and no succeeded after a failed step")
			}

			root, trace, code = runScript(t, shell, nodereport.CloudInit, true)
			if trace != "pre0\npre1 hello\npre2" || code != 4 {
				t.Fatalf("fail-fast: status %d (want 4), trace:\n%s", code, trace)
			}
			if f := spooled(t, root, "2-failed.json"); f == nil || f["step"] != "preKubeadmCommands[2]" {
				t.Fatalf("fail-fast: failed report %v", f)
			}
		})
	}
}

// TestIgnitionSemantics: under set -e the failing command ends the script
// with its status; the OnFailure= handler, given the status as systemd
// gives it, reports the step that was running.
func TestIgnitionSemantics(t *testing.T) {
	lookPath(t, "bash")
	root, trace, code := runScript(t, "bash", nodereport.IgnitionV3, false)
	if trace != "pre0\npre1 hello\npre2" || code != 4 {
		t.Fatalf("status %d (want 4), trace:\n%s", code, trace)
	}
	if spooled(t, root, "2-failed.json") != nil {
		t.Fatal("a failure was reported before the unit failed")
	}
	cmd := exec.Command(lookPath(t, "dash"), filepath.Join(root, nodereport.ScriptPath), "unit-failed", "nodeboot-bootstrap.service")
	cmd.Env = append(os.Environ(), "NODEBOOT_REPORT_ROOT="+root, "NODEBOOT_REPORT_NO_SEND=1", "MONITOR_EXIT_STATUS=4", "PATH=/nonexistent:/usr/bin:/bin")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unit-failed: %v\n%s", err, out)
	}
	if f := spooled(t, root, "2-failed.json"); f == nil || f["step"] != "preKubeadmCommands[2]" || f["exitCode"] != float64(4) {
		t.Fatalf("failed report %v, want preKubeadmCommands[2] exit 4", f)
	}
}
