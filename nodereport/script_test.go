package nodereport_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodeboot/nodeboot/nodereport"
	"github.com/nodeboot/nodeboot/provisioning"
)

const credential = "c2VjcmV0LWNyZWRlbnRpYWwtdmFsdWUtMDEyMzQ1Njc4OQ"

// received is what the test endpoint got.
type received struct {
	mu      sync.Mutex
	reports []map[string]any
	auth    []string
	// seen is the Authorization header of every request, reports or not.
	seen []string
	// fail answers this many requests 503 first.
	fail int
}

func (r *received) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, req.Header.Get("Authorization"))
	if r.fail > 0 {
		r.fail--
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	m := map[string]any{}
	if err := json.Unmarshal(body, &m); err != nil || req.URL.Path != "/nodeboot/v1/report/ns/c" || req.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "bad report", http.StatusBadRequest)
		return
	}
	r.reports = append(r.reports, m)
	r.auth = append(r.auth, req.Header.Get("Authorization"))
	w.WriteHeader(http.StatusAccepted)
}

func (r *received) phases() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.reports {
		out = append(out, m["phase"].(string))
	}
	return out
}

// node is a root directory with the files Apply adds, a PATH of the tools
// the node has, and the shell that runs the reporter.
type node struct {
	t     *testing.T
	root  string
	shell []string
	path  string
	argv  string // where the curl and wget wrappers log their arguments
	// prefix runs the shell under another command (a mount namespace);
	// env is added to every run.
	prefix, env []string
}

// newNode writes the reporter's files for target into a fresh root, with
// srv's certificate as the CA bundle. tools are the sender tools the node
// has: "curl", "wget" (GNU), "busybox-wget", and "timeout" (coreutils', or
// BusyBox's with the busybox shell).
func newNode(t *testing.T, shell string, srv *httptest.Server, target nodereport.Target, tools ...string) *node {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return newNodeCA(t, shell, srv.URL+"/nodeboot/v1/report/ns/c", ca, target, tools...)
}

// newNodeCA is newNode for a report URL and a CA bundle of the test's
// choosing. shell is "dash", "busybox" or "bash" (which is then also sh).
func newNodeCA(t *testing.T, shell, url string, ca []byte, target nodereport.Target, tools ...string) *node {
	t.Helper()
	plan := &provisioning.Plan{Sentinel: "/run/cluster-api/bootstrap-success.complete",
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join"}}}
	if err := nodereport.Apply(plan, nodereport.Options{URL: url, Credential: credential, CABundle: ca, Target: target}); err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, root: t.TempDir()}
	for _, f := range plan.Files {
		writeFile(t, filepath.Join(n.root, f.Path), f)
	}
	bin := t.TempDir()
	n.argv = filepath.Join(t.TempDir(), "argv")
	link := func(name, to string) {
		if err := os.Symlink(to, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	base := []string{"sh", "sed", "tail", "tr", "cut", "cat", "mkdir", "mv", "rm", "mktemp", "date", "sleep", "head", "ls", "grep", "setsid", "wc"}
	switch shell {
	case "busybox":
		bb := lookPath(t, "busybox")
		for _, b := range base {
			link(b, bb)
		}
		n.shell = []string{bb, "sh"}
	case "bash":
		for _, b := range base[1:] {
			link(b, lookPath(t, b))
		}
		link("sh", lookPath(t, "bash"))
		n.shell = []string{lookPath(t, "bash")}
	default:
		for _, b := range base {
			link(b, lookPath(t, b))
		}
		n.shell = []string{lookPath(t, "dash")}
	}
	// The wrappers record their arguments, their environment and the mode
	// of every configuration file they are given: the credential must be
	// in none of the first two, and only in files of mode 0600.
	env, stat := lookPath(t, "env"), lookPath(t, "stat")
	wrap := func(name, real string) {
		script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + n.argv + "\n" + env + " >> " + n.argv + ".env\nprev=\n" +
			"for a; do case $prev in -K) " + stat + " -c 'mode %a' \"$a\" >> " + n.argv + ".env ;; esac\n" +
			"case $a in --config=*) " + stat + " -c 'mode %a' \"${a#--config=}\" >> " + n.argv + ".env ;; esac; prev=$a; done\n" +
			"exec " + real + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range tools {
		switch tool {
		case "curl":
			wrap("curl", lookPath(t, "curl"))
		case "wget":
			wrap("wget", lookPath(t, "wget"))
		case "busybox-wget":
			wrap("wget", lookPath(t, "busybox")+" wget")
		case "timeout":
			if shell == "busybox" {
				link("timeout", lookPath(t, "busybox"))
			} else {
				link("timeout", lookPath(t, "timeout"))
			}
		}
	}
	n.path = bin
	return n
}

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is needed on the test machine: %v", name, err)
	}
	return p
}

func writeFile(t *testing.T, path string, f provisioning.File) {
	t.Helper()
	content := []byte(f.Content)
	switch f.Encoding {
	case provisioning.EncodingBase64, provisioning.EncodingGzipBase64:
		raw, err := base64.StdEncoding.DecodeString(f.Content)
		if err != nil {
			t.Fatal(err)
		}
		content = raw
		if f.Encoding == provisioning.EncodingGzipBase64 {
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if content, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
}

// run runs the reporter with args; it returns the exit code and the output.
func (n *node) run(env []string, args ...string) (int, string) {
	n.t.Helper()
	code, out, _ := n.runFor(2*time.Minute, env, args...)
	return code, out
}

// command is the reporter run with args, under n's prefix, in n's shell,
// with n's PATH and root.
func (n *node) command(ctx context.Context, env []string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, n.prefix...), n.shell...), append([]string{filepath.Join(n.root, nodereport.ScriptPath)}, args...)...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append([]string{"PATH=" + n.path, "NODEBOOT_REPORT_ROOT=" + n.root, "NODEBOOT_REPORT_DEADLINE=20", "TMPDIR=" + n.root}, n.env...), env...)
	// The shell's children (curl, a sender in the background) keep its
	// output open: stop waiting for them once the shell is gone.
	cmd.WaitDelay = time.Second
	return cmd
}

// runFor is run with the run killed after limit; it also returns how long
// the run took (limit when it was killed: then the code is -1).
func (n *node) runFor(limit time.Duration, env []string, args ...string) (int, string, time.Duration) {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := n.command(ctx, env, args...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	code := 0
	if ctx.Err() != nil {
		return -1, string(out), limit
	}
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		n.t.Fatal(err)
	}
	return code, string(out), took
}

func (n *node) spool() []string {
	entries, _ := os.ReadDir(filepath.Join(n.root, nodereport.SpoolDir))
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func (n *node) waitSpoolEmpty(timeout time.Duration) {
	n.t.Helper()
	deadline := time.Now().Add(timeout)
	for len(n.spool()) > 0 {
		if time.Now().After(deadline) {
			_, out := n.run(nil, "flush")
			n.t.Fatalf("reports still spooled after %s: %v\nflush:\n%s", timeout, n.spool(), out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// secretLog is command output with what must never leave the node.
const secretLog = "pulling images\n" +
	// kubeadm's preflight colours its output.
	"\x1b[0;37mCGROUPS_PIDS\x1b[0m: \x1b[0;32menabled\x1b[0m\n" +
	"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAwFakeKeyMaterialThatMustNotLeaveTheNode0123456789\n-----END RSA PRIVATE KEY-----\n" +
	"kubeadm join --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:00\n" +
	"login with password=hunter2 failed\n" +
	"echo " + credential + "\n" +
	"error execution phase preflight: kubeadm: command not found\n"

func shells(t *testing.T) []string {
	t.Helper()
	lookPath(t, "dash")
	lookPath(t, "busybox")
	return []string{"dash", "busybox"}
}

// TestReportFailed: with curl, a failed command is reported with its step,
// exit code and a log tail redacted on the node; the command's status is
// handed on; nothing sent or printed carries the credential.
func TestReportFailed(t *testing.T) {
	for _, shell := range shells(t) {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			rec := &received{}
			srv := httptest.NewTLSServer(rec)
			defer srv.Close()
			n := newNode(t, shell, srv, nodereport.CloudInit, "curl")
			logFile := filepath.Join(n.root, "/var/log/cloud-init-output.log")
			writeFile(t, logFile, provisioning.File{Content: "output of an earlier step\n"})
			var out strings.Builder
			for _, step := range [][]string{{"started"}, {"check", "0", "preKubeadmCommands[0]"}, {"check", "127", "preKubeadmCommands[1]"}, {"check", "1", "kubeadm"}, {"finish", "1"}} {
				if len(step) > 1 && step[1] == "127" {
					// The failing command's output.
					f, err := os.OpenFile(logFile, os.O_APPEND|os.O_WRONLY, 0)
					if err != nil {
						t.Fatal(err)
					}
					_, _ = f.WriteString(secretLog)
					f.Close()
				}
				code, o := n.run(nil, step...)
				out.WriteString(o)
				want := 0
				if step[0] == "check" || step[0] == "finish" {
					want = map[string]int{"0": 0, "127": 127, "1": 1}[step[1]]
				}
				if code != want {
					t.Fatalf("%v exited %d, want the command's status %d\n%s", step, code, want, o)
				}
			}
			n.waitSpoolEmpty(20 * time.Second)
			if got := strings.Join(rec.phases(), ","); got != "started,failed" {
				t.Fatalf("reports %s, want started,failed (the first failure only, no success after it)", got)
			}
			f := rec.reports[1]
			if f["step"] != "preKubeadmCommands[1]" || f["exitCode"] != float64(127) {
				t.Errorf("failed report names %v exit %v, want preKubeadmCommands[1] exit 127", f["step"], f["exitCode"])
			}
			log, _ := f["log"].(string)
			for _, secret := range []string{"hunter2", "abcdef.0123456789abcdef", "MIIEowIBAAKCAQEA", credential} {
				if strings.Contains(log, secret) {
					t.Errorf("the log tail carries a secret: %q", log)
				}
			}
			if strings.Contains(log, "earlier step") {
				t.Errorf("the log tail has an earlier step's output: %q", log)
			}
			for _, want := range []string{"[redacted private key]", "--token [redacted]", "password=[redacted]", "kubeadm: command not found", "CGROUPS_PIDS: enabled"} {
				if !strings.Contains(log, want) {
					t.Errorf("log tail lacks %q: %q", want, log)
				}
			}
			for _, a := range rec.auth {
				if a != "Bearer "+credential {
					t.Errorf("Authorization header %q", a)
				}
			}
			argv, _ := os.ReadFile(n.argv)
			if !strings.Contains(string(argv), "--cacert") || strings.Contains(string(argv), credential) || strings.Contains(out.String(), credential) {
				t.Errorf("curl command lines or output carry the credential, or no --cacert:\n%s\n%s", argv, out.String())
			}
		})
	}
}

// TestReportSucceededWithWget: without curl, GNU wget sends; success is
// reported once the sentinel exists; a 503 is retried.
func TestReportSucceededWithWget(t *testing.T) {
	lookPath(t, "wget")
	for _, shell := range shells(t) {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			rec := &received{fail: 1}
			srv := httptest.NewTLSServer(rec)
			defer srv.Close()
			n := newNode(t, shell, srv, nodereport.CloudInit, "wget")
			n.run(nil, "started")
			if code, o := n.run(nil, "check", "0", "kubeadm"); code != 0 {
				t.Fatalf("check 0: %d %s", code, o)
			}
			writeFile(t, filepath.Join(n.root, "/run/cluster-api/bootstrap-success.complete"), provisioning.File{Content: "success\n"})
			if code, o := n.run(nil, "finish", "0"); code != 0 {
				t.Fatalf("finish: %d %s", code, o)
			}
			n.waitSpoolEmpty(20 * time.Second)
			if got := strings.Join(rec.phases(), ","); got != "started,succeeded" {
				t.Fatalf("reports %s, want started,succeeded", got)
			}
			argv, _ := os.ReadFile(n.argv)
			if !strings.Contains(string(argv), "--ca-certificate") || strings.Contains(string(argv), credential) {
				t.Errorf("wget command lines carry the credential, or no --ca-certificate:\n%s", argv)
			}
		})
	}
}

// TestReportSpooled: with neither curl nor GNU wget (BusyBox's wget cannot
// verify the server, so it is not used) reports stay in the spool and the
// boot goes on; flush sends them later.
func TestReportSpooled(t *testing.T) {
	for _, shell := range shells(t) {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			rec := &received{}
			srv := httptest.NewTLSServer(rec)
			defer srv.Close()
			n := newNode(t, shell, srv, nodereport.CloudInit, "busybox-wget")
			writeFile(t, filepath.Join(n.root, "/var/log/cloud-init-output.log"), provisioning.File{Content: secretLog})
			if code, _ := n.run(nil, "started"); code != 0 {
				t.Fatalf("started exited %d", code)
			}
			if code, _ := n.run(nil, "check", "2", "postKubeadmCommands[0]"); code != 2 {
				t.Fatalf("check 2 exited %d", code)
			}
			time.Sleep(1500 * time.Millisecond) // the background senders give up
			if got := n.spool(); strings.Join(got, ",") != "1-started.json,2-failed.json" {
				t.Fatalf("spool %v", got)
			}
			if len(rec.phases()) != 0 {
				t.Fatalf("sent without a verifying tool: %v", rec.phases())
			}
			spooled, _ := os.ReadFile(filepath.Join(n.root, nodereport.SpoolDir, "2-failed.json"))
			if strings.Contains(string(spooled), "hunter2") || strings.Contains(string(spooled), credential) || !json.Valid(spooled) {
				t.Fatalf("spooled report is not redacted JSON: %s", spooled)
			}
			// Asked for its version only, never to send.
			if argv, _ := os.ReadFile(n.argv); strings.Trim(strings.ReplaceAll(string(argv), "--version", ""), "\n") != "" {
				t.Fatalf("BusyBox wget was run: %s", argv)
			}
			// The operator (or the test) flushes with a tool that verifies.
			n = &node{t: t, root: n.root, shell: n.shell, path: newNode(t, shell, srv, nodereport.CloudInit, "curl").path}
			if code, o := n.run(nil, "flush"); code != 0 || strings.Contains(o, credential) {
				t.Fatalf("flush exited %d:\n%s", code, o)
			}
			if got := strings.Join(rec.phases(), ","); got != "started,failed" || len(n.spool()) != 0 {
				t.Fatalf("after flush: sent %s, spool %v", got, n.spool())
			}
		})
	}
}
