package nodereport_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	nodereportctrl "github.com/nodeboot/nodeboot/controllers/nodereport"
	"github.com/nodeboot/nodeboot/nodereport"
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/test/testenv"
)

const reportPath = "/nodeboot/v1/report/ns/c"

// senders are the tool sets a node sends with.
var senders = map[string][]string{"curl": {"curl"}, "wget": {"wget", "timeout"}}

// spoolStarted spools the started report without sending it.
func (n *node) spoolStarted() {
	n.t.Helper()
	if code, out := n.run([]string{"NODEBOOT_REPORT_NO_SEND=1"}, "started"); code != 0 || len(n.spool()) != 1 {
		n.t.Fatalf("started exited %d, spool %v:\n%s", code, n.spool(), out)
	}
}

// stepOutput starts the reporter on a cloud-init node whose output log holds
// an earlier step's line, and returns the log open for appending what the
// step that fails next prints.
func (n *node) stepOutput() *os.File {
	n.t.Helper()
	log := filepath.Join(n.root, "/var/log/cloud-init-output.log")
	writeFile(n.t, log, provisioning.File{Content: "output of an earlier step\n"})
	n.spoolStarted()
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		n.t.Fatal(err)
	}
	return f
}

// TestReportTrustsOnlyItsCA: with a CA bundle in the data, curl and GNU
// wget trust that bundle and nothing else: a server the system store (the
// mounted /etc/ssl/certs and the SSL_CERT_* and CURL_CA_BUNDLE variables)
// trusts but the bundle does not gets no report, and the report stays
// spooled. With the server's CA in the bundle and another in the system
// store, the report goes.
func TestReportTrustsOnlyItsCA(t *testing.T) {
	system, other := testenv.NewCA(t), testenv.NewCA(t)
	for tool, tools := range senders {
		for _, shell := range shells(t) {
			t.Run(tool+"/"+shell, func(t *testing.T) {
				t.Parallel()
				rec := &received{}
				url := system.StartTLS(t, rec, "").URL + reportPath
				n := newNodeCA(t, shell, url, other.PEM, nodereport.CloudInit, tools...)
				n.prefix, n.env = testenv.SystemTrust(t, system.PEM)
				n.spoolStarted()
				if code, out := n.run(nil, "flush"); code == 0 || len(rec.seen) != 0 || len(n.spool()) != 1 {
					t.Fatalf("a server only the system store trusts: flush exited %d, server saw %d requests, spool %v:\n%s", code, len(rec.seen), n.spool(), out)
				}

				n = newNodeCA(t, shell, url, system.PEM, nodereport.CloudInit, tools...)
				n.prefix, n.env = testenv.SystemTrust(t, other.PEM)
				n.spoolStarted()
				if code, out := n.run(nil, "flush"); code != 0 || strings.Join(rec.phases(), ",") != "started" || len(n.spool()) != 0 {
					t.Fatalf("the server's CA in the bundle: flush exited %d, sent %v, spool %v:\n%s", code, rec.phases(), n.spool(), out)
				}
			})
		}
	}
}

// TestReportFollowsNoRedirect: a server answering 301 to plain http or 307
// to another host gets the report's attempt, nobody else does (the
// credential goes nowhere else), and the report stays spooled: only an
// answer of the configured URL counts.
func TestReportFollowsNoRedirect(t *testing.T) {
	ca := testenv.NewCA(t)
	for tool, tools := range senders {
		for _, shell := range shells(t) {
			for _, redirect := range []string{"301 to http", "307 to another host"} {
				t.Run(tool+"/"+shell+"/"+redirect, func(t *testing.T) {
					t.Parallel()
					elsewhere := &received{}
					target, code := "", http.StatusMovedPermanently
					if strings.HasPrefix(redirect, "301") {
						plain := httptest.NewServer(elsewhere)
						t.Cleanup(plain.Close)
						target = plain.URL
					} else {
						target, code = ca.StartTLS(t, elsewhere, "127.0.0.2:0").URL, http.StatusTemporaryRedirect
					}
					srv := ca.StartTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						_, _ = io.Copy(io.Discard, r.Body)
						http.Redirect(w, r, target+r.URL.Path, code)
					}), "")
					n := newNodeCA(t, shell, srv.URL+reportPath, ca.PEM, nodereport.CloudInit, tools...)
					n.spoolStarted()
					rc, out := n.run(nil, "flush")
					if len(elsewhere.seen) != 0 {
						t.Fatalf("the redirect was followed: %d requests elsewhere (Authorization %q)", len(elsewhere.seen), elsewhere.seen)
					}
					if rc == 0 || len(n.spool()) != 1 {
						t.Fatalf("a redirect counted as delivered: flush exited %d, spool %v:\n%s", rc, n.spool(), out)
					}
				})
			}
		}
	}
}

// TestReportDeadline: a server that drips its TLS handshake a byte at a
// time holds no attempt past the deadline (NODEBOOT_REPORT_DEADLINE, at
// most 30 s an attempt), with curl, with GNU wget under timeout, and with
// GNU wget on a node without timeout.
func TestReportDeadline(t *testing.T) {
	url := "https://" + testenv.DripListener(t) + reportPath
	ca := testenv.NewCA(t).PEM
	const deadline = 4 * time.Second
	cases := map[string][]string{"curl": {"curl"}, "wget": {"wget", "timeout"}, "wget without timeout": {"wget"}}
	for name, tools := range cases {
		for _, shell := range shells(t) {
			t.Run(name+"/"+shell, func(t *testing.T) {
				t.Parallel()
				n := newNodeCA(t, shell, url, ca, nodereport.CloudInit, tools...)
				n.spoolStarted()
				code, out, took := n.runFor(30*time.Second, []string{"NODEBOOT_REPORT_DEADLINE=4"}, "flush")
				if code == -1 || took > deadline+5*time.Second {
					t.Fatalf("flush took %s (exit %d) with a deadline of %s:\n%s", took.Round(time.Millisecond), code, deadline, out)
				}
				if code == 0 || len(n.spool()) != 1 {
					t.Fatalf("flush exited %d, spool %v", code, n.spool())
				}
			})
		}
	}
}

// TestReportCredentialNotTraced: with bash as sh, run under bash -x and
// with SHELLOPTS=xtrace in its environment (as a traced boot script hands
// it down), the reporter prints no credential while it spools, redacts and
// sends; curl and wget get it neither as an argument nor in their
// environment, only in 0600 files that are gone afterwards.
func TestReportCredentialNotTraced(t *testing.T) {
	lookPath(t, "bash")
	ca := testenv.NewCA(t)
	for tool, tools := range senders {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			rec := &received{}
			n := newNodeCA(t, "bash", ca.StartTLS(t, rec, "").URL+reportPath, ca.PEM, nodereport.CloudInit, tools...)
			n.shell = append(n.shell, "-x")
			writeFile(t, filepath.Join(n.root, "/var/log/cloud-init-output.log"), provisioning.File{Content: secretLog})
			env := []string{"SHELLOPTS=xtrace", "NODEBOOT_REPORT_NO_SEND=1"}
			var out strings.Builder
			for _, step := range [][]string{{"started"}, {"check", "1", "preKubeadmCommands[0]"}, {"flush"}} {
				_, o := n.run(env, step...)
				out.WriteString(o)
			}
			if !strings.Contains(out.String(), "+ ") {
				t.Fatalf("the test traces nothing:\n%s", out.String())
			}
			if strings.Contains(out.String(), credential) {
				t.Errorf("the traced reporter printed the credential:\n%s", out.String())
			}
			if got := strings.Join(rec.phases(), ","); got != "started,failed" || len(n.spool()) != 0 {
				t.Fatalf("sent %s, spool %v:\n%s", got, n.spool(), out.String())
			}
			for _, a := range rec.auth {
				if a != "Bearer "+credential {
					t.Errorf("Authorization header %q", a)
				}
			}
			argv, _ := os.ReadFile(n.argv)
			environ, _ := os.ReadFile(n.argv + ".env")
			if bytes.Contains(argv, []byte(credential)) || bytes.Contains(environ, []byte(credential)) {
				t.Errorf("%s got the credential as an argument or in its environment", tool)
			}
			modes := 0
			for _, l := range strings.Split(string(environ), "\n") {
				if m, ok := strings.CutPrefix(l, "mode "); ok {
					modes++
					if m != "600" {
						t.Errorf("%s read a configuration file of mode %s", tool, m)
					}
				}
			}
			if modes == 0 {
				t.Errorf("%s was given no configuration file", tool)
			}
			left, _ := filepath.Glob(filepath.Join(n.root, "nodeboot-report.*"))
			if len(left) != 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

// TestReportLogTailBounded: a failed step whose output is one 200 MB line
// is reported, with the line after it, in bounded memory: no process of
// the reporter holds the line.
func TestReportLogTailBounded(t *testing.T) {
	const maxRSS = 16 << 20
	for _, shell := range shells(t) {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			n := newNodeCA(t, shell, "https://127.0.0.1:1"+reportPath, testenv.NewCA(t).PEM, nodereport.CloudInit)
			f := n.stepOutput()
			chunk := bytes.Repeat([]byte("x"), 1<<20)
			for range 200 {
				if _, err := f.Write(chunk); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.WriteString("\nerror: the reason\n"); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			// GNU time reports the largest process of the tree: the shell
			// and every process it (or a subshell of it) waited for. (Read
			// from Go, the figure would start at the test binary's own RSS,
			// which a process keeps across exec.)
			report := filepath.Join(t.TempDir(), "rss")
			n.prefix = []string{lookPath(t, "time"), "-f", "%M", "-o", report}
			start := time.Now()
			if code, out, _ := n.runFor(2*time.Minute, []string{"NODEBOOT_REPORT_NO_SEND=1"}, "check", "1", "kubeadm"); code != 1 {
				t.Fatalf("check 1 exited %d:\n%s", code, out)
			}
			raw, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
			kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
			if err != nil {
				t.Fatalf("GNU time: %q", raw)
			}
			rss := kib << 10
			t.Logf("%s: peak RSS %d KiB, %s", shell, kib, time.Since(start).Round(time.Millisecond))
			if rss > maxRSS {
				t.Errorf("reporting a 200 MB line took a process of %d MiB, want at most %d MiB", rss>>20, maxRSS>>20)
			}
			raw, err = os.ReadFile(filepath.Join(n.root, nodereport.SpoolDir, "2-failed.json"))
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]any{}
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("spooled report: %v", err)
			}
			if l, _ := m["log"].(string); !strings.HasSuffix(l, "error: the reason\n") || len(l) > 64<<10 {
				t.Errorf("log tail (%d bytes) does not end in the step's last line: %.200q", len(l), l)
			}
		})
	}
}

// TestReportBodyBoundedInUTF8Locale: Fedora's, RHEL's and SUSE's coreutils
// count `cut -c` in characters under a UTF-8 locale, so a line of CJK text
// cut "at 512" would be three times as long. The report must stay under the
// manager's body limit (which answers a larger one 413, and the node drops
// it) whatever the node's locale. The node's cut here behaves as theirs.
func TestReportBodyBoundedInUTF8Locale(t *testing.T) {
	// The interpreter itself: a python3 on PATH may be a shim that needs
	// tools the node's PATH does not have.
	exe, err := exec.Command(lookPath(t, "python3"), "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatal(err)
	}
	python := strings.TrimSpace(string(exe))
	for _, shell := range shells(t) {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			n := newNodeCA(t, shell, "https://127.0.0.1:1"+reportPath, testenv.NewCA(t).PEM, nodereport.CloudInit)
			real, err := filepath.EvalSymlinks(filepath.Join(n.path, "cut"))
			if err != nil {
				t.Fatal(err)
			}
			i18n := `import sys
n = int(sys.argv[2].split("-")[1])
for line in sys.stdin.buffer:
    s = line.rstrip(b"\n").decode("utf-8", "surrogateescape")
    sys.stdout.buffer.write(s[:n].encode("utf-8", "surrogateescape") + b"\n")
`
			cut := "#!/bin/sh\ncase ${LC_ALL:-${LC_CTYPE:-${LANG:-}}} in\n*[Uu][Tt][Ff]-8*|*[Uu][Tt][Ff]8*) exec " + python + " -c '" + i18n + "' \"$@\" ;;\nesac\nexec " +
				map[bool]string{true: real + " cut", false: real}[shell == "busybox"] + " \"$@\"\n"
			if err := os.Remove(filepath.Join(n.path, "cut")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(n.path, "cut"), []byte(cut), 0o755); err != nil {
				t.Fatal(err)
			}
			f := n.stepOutput()
			for range 60 {
				if _, err := f.WriteString(strings.Repeat("節點啟動失敗", 100) + "\n"); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if code, out, _ := n.runFor(time.Minute, []string{"NODEBOOT_REPORT_NO_SEND=1", "LANG=C.UTF-8"}, "check", "1", "kubeadm"); code != 1 {
				t.Fatalf("check 1 exited %d:\n%s", code, out)
			}
			raw, err := os.ReadFile(filepath.Join(n.root, nodereport.SpoolDir, "2-failed.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) > nodereportctrl.MaxBody {
				t.Fatalf("the failure report is %d bytes, over the manager's limit of %d", len(raw), nodereportctrl.MaxBody)
			}
			m := map[string]any{}
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("spooled report: %v", err)
			}
			if l, _ := m["log"].(string); !strings.Contains(l, "節點啟動失敗") {
				t.Errorf("the log tail lost the step's output: %.200q", l)
			}
		})
	}
}
