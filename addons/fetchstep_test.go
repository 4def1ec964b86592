package addons

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// The tests below run apply.sh's fetch with real shells, real curl, GNU
// wget and BusyBox wget against real TLS servers. kubectl is "true": they
// are about what the step fetches and sends, not what it applies (the
// envtest suites in test/addons and test/controllers apply for real).

const fetchCredential = "ZmV0Y2gtY3JlZGVudGlhbC12YWx1ZS0wMTIzNDU2Nzg5"

var fetchManifest = []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fetched\n")

// origin serves fetchManifest at /m.yaml to a request with the credential
// in its Authorization header and no query, and records every request's
// Authorization header and query.
type origin struct {
	mu      sync.Mutex
	auth    []string
	queries []string
	// redirect, when set, answers every request with a redirect there.
	redirect string
	code     int
}

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.auth = append(o.auth, r.Header.Get("Authorization"))
	o.queries = append(o.queries, r.URL.RawQuery)
	o.mu.Unlock()
	if o.redirect != "" {
		http.Redirect(w, r, o.redirect+r.URL.Path, o.code)
		return
	}
	if r.URL.Path != "/m.yaml" || r.URL.RawQuery != "" || r.Header.Get("Authorization") != "Bearer "+fetchCredential {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(fetchManifest)
}

func (o *origin) requests() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.auth)
}

// fetchNode is an add-on directory as the bootstrap data leaves it, a PATH
// of the tools the node has and the shell that runs the step.
type fetchNode struct {
	t              *testing.T
	dir, bin, argv string
	digest         string
	shell          []string
	prefix, env    []string
	manifest, tmp  string
	timeout        int
}

// newFetchNode contributes a with Contribute and writes the files under a
// fresh directory. shell is "dash", "busybox" or "bash" (then also sh);
// tools are "curl", "wget" (GNU), "busybox-wget" and "timeout".
func newFetchNode(t *testing.T, shell string, a Addon, tools ...string) *fetchNode {
	t.Helper()
	plan := &provisioning.Plan{Role: provisioning.RoleInit, Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "kubeadm init"}}}
	if err := Contribute(plan, []Addon{a}, Options{}); err != nil {
		t.Fatal(err)
	}
	n := &fetchNode{t: t, dir: t.TempDir(), bin: t.TempDir(), tmp: t.TempDir(), timeout: 20}
	n.argv = filepath.Join(t.TempDir(), "argv")
	for _, f := range plan.Files {
		if err := os.WriteFile(filepath.Join(n.dir, strings.TrimPrefix(f.Path, DefaultDir+"/")), []byte(f.Content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range plan.Commands {
		if f := strings.Fields(c.Script); len(f) == 3 && f[1] == DefaultDir+"/"+ScriptFile {
			n.digest = f[2]
		}
	}
	n.manifest = filepath.Join(n.dir, "000-"+a.Name+".yaml")
	look := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("%s is needed on the test machine: %v", name, err)
		}
		return p
	}
	link := func(name, to string) {
		if err := os.Symlink(to, filepath.Join(n.bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	// true stands in for kubectl (NODEBOOT_KUBECTL), a program, not the builtin.
	base := []string{"sh", "dirname", "date", "mktemp", "rm", "sha256sum", "cut", "sleep", "mv", "cat", "wc", "tail", "tr", "mkdir", "grep", "head", "true"}
	switch shell {
	case "busybox":
		for _, b := range base {
			link(b, look("busybox"))
		}
		n.shell = []string{look("busybox"), "sh"}
	case "bash":
		for _, b := range base[1:] {
			link(b, look(b))
		}
		link("sh", look("bash"))
		n.shell = []string{look("bash")}
	default:
		for _, b := range base {
			link(b, look(b))
		}
		n.shell = []string{look("dash")}
	}
	// The wrappers record their arguments, their environment and the mode
	// of every configuration file they are given.
	env, stat := look("env"), look("stat")
	wrap := func(name, real string) {
		script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + n.argv + "\n" + env + " >> " + n.argv + ".env\nprev=\n" +
			"for a; do case $prev in -K) " + stat + " -c 'mode %a' \"$a\" >> " + n.argv + ".env ;; esac\n" +
			"case $a in --config=*) " + stat + " -c 'mode %a' \"${a#--config=}\" >> " + n.argv + ".env ;; esac; prev=$a; done\n" +
			"exec " + real + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(n.bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range tools {
		switch tool {
		case "curl":
			wrap("curl", look("curl"))
		case "wget":
			wrap("wget", look("wget"))
		case "busybox-wget":
			wrap("wget", look("busybox")+" wget")
		case "timeout":
			if shell == "busybox" {
				link("timeout", look("busybox"))
			} else {
				link("timeout", look("timeout"))
			}
		}
	}
	return n
}

// run runs the step, killed after limit; it returns the exit code (-1 when
// killed), the output and how long it took.
func (n *fetchNode) run(limit time.Duration, env ...string) (int, string, time.Duration) {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	argv := append(append(append([]string{}, n.prefix...), n.shell...), filepath.Join(n.dir, ScriptFile), n.digest)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append([]string{"PATH=" + n.bin, "TMPDIR=" + n.tmp, "NODEBOOT_ADDONS_DIR=" + n.dir, "NODEBOOT_KUBECTL=true",
		"NODEBOOT_ADDONS_TIMEOUT=" + strconv.Itoa(n.timeout)}, n.env...), env...)
	cmd.WaitDelay = time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if ctx.Err() != nil {
		return -1, string(out), took
	}
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		n.t.Fatal(err)
	}
	return code, string(out), took
}

func (n *fetchNode) fetched() bool {
	raw, err := os.ReadFile(n.manifest)
	return err == nil && bytes.Equal(raw, fetchManifest)
}

func fetchShells(t *testing.T) []string {
	t.Helper()
	for _, s := range []string{"dash", "busybox"} {
		if _, err := exec.LookPath(s); err != nil {
			t.Fatalf("%s is needed on the test machine: %v", s, err)
		}
	}
	return []string{"dash", "busybox"}
}

// fetchTools are the tool sets a node fetches a credentialed add-on with.
var fetchTools = map[string][]string{"curl": {"curl"}, "wget": {"wget", "timeout"}}

func credentialed(url string, ca []byte) Addon {
	return Addon{Name: "cni", URL: url + "/m.yaml", SHA256: Digest(fetchManifest), CABundle: ca, Credential: fetchCredential}
}

// TestFetchSendsCredentialInHeader: the credential reaches the server in an
// Authorization header and nowhere else: not in the URL, not on a command
// line or in a tool's environment, not in the output; the tools read it
// from 0600 files that are gone afterwards.
func TestFetchSendsCredentialInHeader(t *testing.T) {
	ca := testenv.NewCA(t)
	for tool, tools := range fetchTools {
		for _, shell := range fetchShells(t) {
			t.Run(tool+"/"+shell, func(t *testing.T) {
				t.Parallel()
				o := &origin{}
				n := newFetchNode(t, shell, credentialed(ca.StartTLS(t, o, "").URL, ca.PEM), tools...)
				code, out, _ := n.run(time.Minute)
				if code != 0 || !n.fetched() {
					t.Fatalf("step exited %d, fetched %v:\n%s", code, n.fetched(), out)
				}
				for i, a := range o.auth {
					if a != "Bearer "+fetchCredential || o.queries[i] != "" {
						t.Errorf("request %d: Authorization %q, query %q", i, a, o.queries[i])
					}
				}
				argv, _ := os.ReadFile(n.argv)
				environ, _ := os.ReadFile(n.argv + ".env")
				if strings.Contains(out, fetchCredential) || bytes.Contains(argv, []byte(fetchCredential)) || bytes.Contains(environ, []byte(fetchCredential)) {
					t.Errorf("the credential is in the output, a command line or an environment:\n%s\n%s", out, argv)
				}
				if !strings.Contains(string(environ), "mode 600") || strings.Contains(strings.ReplaceAll(string(environ), "mode 600", ""), "mode ") {
					t.Errorf("%s read no configuration file, or one not 0600", tool)
				}
				if left, _ := os.ReadDir(n.tmp); len(left) != 0 {
					t.Errorf("temporary files left: %v", left)
				}
			})
		}
	}
}

// TestFetchTrustsOnlyItsCA: with a CA bundle, a server only the system
// store trusts (mounted /etc/ssl/certs, SSL_CERT_* and CURL_CA_BUNDLE) gets
// no request; with its CA in the bundle and another in the system store the
// add-on is fetched.
func TestFetchTrustsOnlyItsCA(t *testing.T) {
	system, other := testenv.NewCA(t), testenv.NewCA(t)
	for tool, tools := range fetchTools {
		for _, shell := range fetchShells(t) {
			t.Run(tool+"/"+shell, func(t *testing.T) {
				t.Parallel()
				o := &origin{}
				url := system.StartTLS(t, o, "").URL
				n := newFetchNode(t, shell, credentialed(url, other.PEM), tools...)
				n.timeout = 3
				n.prefix, n.env = testenv.SystemTrust(t, system.PEM)
				if code, out, _ := n.run(time.Minute); code == 0 || n.fetched() || o.requests() != 0 {
					t.Fatalf("a server only the system trusts: exit %d, fetched %v, %d requests:\n%s", code, n.fetched(), o.requests(), out)
				}
				n = newFetchNode(t, shell, credentialed(url, system.PEM), tools...)
				n.prefix, n.env = testenv.SystemTrust(t, other.PEM)
				if code, out, _ := n.run(time.Minute); code != 0 || !n.fetched() {
					t.Fatalf("the server's CA in the bundle: exit %d, fetched %v:\n%s", code, n.fetched(), out)
				}
			})
		}
	}
}

// TestFetchFollowsNoRedirect: with a credential, a 301 to plain http or a
// 307 to another host is not followed: nobody else gets a request.
func TestFetchFollowsNoRedirect(t *testing.T) {
	ca := testenv.NewCA(t)
	for tool, tools := range fetchTools {
		for _, shell := range fetchShells(t) {
			for _, redirect := range []string{"301 to http", "307 to another host"} {
				t.Run(tool+"/"+shell+"/"+redirect, func(t *testing.T) {
					t.Parallel()
					elsewhere := &origin{}
					o := &origin{code: http.StatusMovedPermanently}
					if strings.HasPrefix(redirect, "301") {
						plain := httptest.NewServer(elsewhere)
						t.Cleanup(plain.Close)
						o.redirect = plain.URL
					} else {
						o.redirect, o.code = ca.StartTLS(t, elsewhere, "127.0.0.2:0").URL, http.StatusTemporaryRedirect
					}
					n := newFetchNode(t, shell, credentialed(ca.StartTLS(t, o, "").URL, ca.PEM), tools...)
					n.timeout = 3
					code, out, _ := n.run(time.Minute)
					if elsewhere.requests() != 0 {
						t.Fatalf("the redirect was followed: %d requests elsewhere, Authorization %q", elsewhere.requests(), elsewhere.auth)
					}
					// A redirect is a failed attempt, not a body to check.
					if code == 0 || n.fetched() || o.requests() == 0 || strings.Contains(out, "sha256") {
						t.Fatalf("exit %d, fetched %v, %d requests to the origin:\n%s", code, n.fetched(), o.requests(), out)
					}
				})
			}
		}
	}
}

// TestFetchDeadline: a server dripping its TLS handshake holds the step no
// longer than its deadline (NODEBOOT_ADDONS_TIMEOUT), with curl, with GNU
// wget under timeout and with GNU wget on a node without timeout.
func TestFetchDeadline(t *testing.T) {
	url := "https://" + testenv.DripListener(t)
	ca := testenv.NewCA(t).PEM
	cases := map[string][]string{"curl": {"curl"}, "wget": {"wget", "timeout"}, "wget without timeout": {"wget"}}
	for name, tools := range cases {
		for _, shell := range fetchShells(t) {
			t.Run(name+"/"+shell, func(t *testing.T) {
				t.Parallel()
				n := newFetchNode(t, shell, credentialed(url, ca), tools...)
				n.timeout = 4
				code, out, took := n.run(40 * time.Second)
				if code == -1 || took > 10*time.Second {
					t.Fatalf("the step took %s (exit %d) with a deadline of 4s:\n%s", took.Round(time.Millisecond), code, out)
				}
				if code == 0 || !strings.Contains(out, "cni: cannot fetch "+url+"/m.yaml") {
					t.Fatalf("exit %d:\n%s", code, out)
				}
			})
		}
	}
}

// TestFetchDeadlineAtItsEnd: an attempt that starts as the step's last
// second runs out gets a bound too. The node's clock (a date that moves one
// second each time it is read) leaves the loop one second and the attempt
// none; a zero bound is "no limit" to curl, wget and timeout alike, and the
// server answers nothing once the handshake is done.
func TestFetchDeadlineAtItsEnd(t *testing.T) {
	ca := testenv.NewCA(t)
	stall := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	})
	url := ca.StartTLS(t, stall, "").URL
	for tool, tools := range fetchTools {
		for _, shell := range fetchShells(t) {
			t.Run(tool+"/"+shell, func(t *testing.T) {
				t.Parallel()
				n := newFetchNode(t, shell, credentialed(url, ca.PEM), tools...)
				clock := filepath.Join(t.TempDir(), "clock")
				fake := "#!/bin/sh\nn=$(cat " + clock + " 2>/dev/null || echo 1000000000)\necho $((n + 1)) > " + clock + "\necho \"$n\"\n"
				if err := os.Remove(filepath.Join(n.bin, "date")); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(n.bin, "date"), []byte(fake), 0o755); err != nil {
					t.Fatal(err)
				}
				n.timeout = 2
				code, out, took := n.run(30 * time.Second)
				if code == -1 || took > 15*time.Second {
					t.Fatalf("the step took %s (exit %d) with a deadline of 2s:\n%s", took.Round(time.Millisecond), code, out)
				}
				if code == 0 {
					t.Fatalf("exit 0:\n%s", out)
				}
			})
		}
	}
}

// TestFetchCredentialNotTraced: run under bash -x with SHELLOPTS=xtrace
// handed down, the step prints no credential.
func TestFetchCredentialNotTraced(t *testing.T) {
	ca := testenv.NewCA(t)
	for tool, tools := range fetchTools {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			n := newFetchNode(t, "bash", credentialed(ca.StartTLS(t, &origin{}, "").URL, ca.PEM), tools...)
			n.shell = append(n.shell, "-x")
			code, out, _ := n.run(time.Minute, "SHELLOPTS=xtrace")
			if code != 0 || !n.fetched() {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			if strings.Contains(out, fetchCredential) {
				t.Fatalf("the traced step printed the credential:\n%s", out)
			}
		})
	}
}

// TestFetchBusyBoxWgetRefused: BusyBox wget cannot verify a server, so a
// node that has nothing else does not send it a credential: it says why,
// and the add-on is not fetched. Without a credential or CA (a public,
// sha256-pinned URL) BusyBox wget still fetches.
func TestFetchBusyBoxWgetRefused(t *testing.T) {
	ca := testenv.NewCA(t)
	for _, shell := range fetchShells(t) {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			o := &origin{}
			n := newFetchNode(t, shell, credentialed(ca.StartTLS(t, o, "").URL, ca.PEM), "busybox-wget", "timeout")
			n.timeout = 3
			code, out, _ := n.run(time.Minute)
			if code == 0 || o.requests() != 0 || !strings.Contains(out, "BusyBox wget cannot verify") {
				t.Fatalf("exit %d, %d requests:\n%s", code, o.requests(), out)
			}
			plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(fetchManifest) }))
			t.Cleanup(plain.Close)
			n = newFetchNode(t, shell, Addon{Name: "cni", URL: plain.URL + "/m.yaml", SHA256: Digest(fetchManifest)}, "busybox-wget", "timeout")
			if code, out, _ := n.run(time.Minute); code != 0 || !n.fetched() {
				t.Fatalf("a public URL with BusyBox wget: exit %d:\n%s", code, out)
			}
		})
	}
}

// TestCredentialValidation: a credential goes over https only, as a token;
// messages never show it.
func TestCredentialValidation(t *testing.T) {
	sum := Digest(fetchManifest)
	for name, a := range map[string]Addon{
		"http":     {Name: "a", URL: "http://example.invalid/m.yaml", SHA256: sum, Credential: fetchCredential},
		"inline":   {Name: "a", Manifest: fetchManifest, Credential: fetchCredential},
		"newline":  {Name: "a", URL: "https://example.invalid/m.yaml", SHA256: sum, Credential: fetchCredential + "\nX"},
		"too long": {Name: "a", URL: "https://example.invalid/m.yaml", SHA256: sum, Credential: strings.Repeat("a", 257)},
	} {
		ps := Validate([]Addon{a})
		if len(ps.Errors()) == 0 || !strings.Contains(ps.Err().Error(), "credential") || strings.Contains(ps.Err().Error(), fetchCredential) {
			t.Errorf("%s: %v", name, ps.Err())
		}
	}
}

// TestContributeCredential: a credential is a 0600 file of its own, shared
// by the add-ons that send it and named in the index's seventh column
// (after "-" when there is no CA bundle); the URL stays as given.
func TestContributeCredential(t *testing.T) {
	sum := Digest(fetchManifest)
	p := &provisioning.Plan{Role: provisioning.RoleInit}
	list := []Addon{
		{Name: "a", URL: "https://mgmt.example/a", SHA256: sum, Credential: fetchCredential},
		{Name: "b", URL: "https://mgmt.example/b", SHA256: sum, Credential: fetchCredential, CABundle: []byte("-----BEGIN CERTIFICATE-----\n")},
	}
	if err := Contribute(p, list, Options{}); err != nil {
		t.Fatal(err)
	}
	tokenFile := "token-" + Digest([]byte(fetchCredential))[:16]
	var index string
	files := 0
	for _, f := range p.Files {
		switch {
		case f.Path == DefaultDir+"/"+IndexFile:
			index = f.Content
		case f.Path == DefaultDir+"/"+tokenFile:
			files++
			if f.Content != fetchCredential || f.Permissions != "0600" {
				t.Errorf("credential file: mode %s, content of %d bytes", f.Permissions, len(f.Content))
			}
		}
	}
	want := "a\t-\t" + sum + "\t000-a.yaml\thttps://mgmt.example/a\t-\t" + tokenFile + "\n" +
		"b\t-\t" + sum + "\t000-b.yaml\thttps://mgmt.example/b\tca-" + Digest(list[1].CABundle)[:16] + ".pem\t" + tokenFile + "\n"
	if files != 1 || index != want {
		t.Fatalf("%d credential files; index:\n%s\nwant:\n%s", files, index, want)
	}
}

// TestFetchPublicURL: an add-on without credential or CA (a public release
// URL, pinned by its sha256) is fetched with the system's trust and its
// redirects followed, as release downloads need, with every tool.
func TestFetchPublicURL(t *testing.T) {
	for tool, tools := range map[string][]string{"curl": {"curl"}, "wget": {"wget", "timeout"}, "busybox-wget": {"busybox-wget"}} {
		for _, shell := range fetchShells(t) {
			t.Run(tool+"/"+shell, func(t *testing.T) {
				t.Parallel()
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/m.yaml" {
						http.Redirect(w, r, "/download/m.yaml", http.StatusFound)
						return
					}
					_, _ = w.Write(fetchManifest)
				}))
				t.Cleanup(srv.Close)
				n := newFetchNode(t, shell, Addon{Name: "cni", URL: srv.URL + "/m.yaml", SHA256: Digest(fetchManifest)}, tools...)
				if code, out, _ := n.run(time.Minute); code != 0 || !n.fetched() {
					t.Fatalf("exit %d, fetched %v:\n%s", code, n.fetched(), out)
				}
			})
		}
	}
}

// TestApplyEndsAtTheStepTimeout: an API server that takes requests and does
// not answer holds the step no longer than its timeout (plus the record):
// kubectl has no deadline of its own, and an attempt used to start, and run
// to its end, whatever time was left. With timeout(1) and with the
// watchdog that stands in for it.
// TestRecordReachesKubectl: the record the apply step writes reaches kubectl
// on its standard input with timeout(1), without it, and with a BusyBox
// older than 1.30 whose timeout takes "-t SECS" only. A shell gives a
// command it starts in the background /dev/null for input unless told
// otherwise, so the watchdog's kubectl read nothing, the record was never
// written and the step failed after every add-on had applied; the old
// timeout failed every apply.
func TestRecordReachesKubectl(t *testing.T) {
	const oldTimeout = "#!/bin/sh\n[ \"$1\" = -t ] || { echo \"timeout: can't execute '$1'\" >&2; exit 127; }\nshift 2\nexec \"$@\"\n"
	for _, shell := range fetchShells(t) {
		for _, tools := range [][]string{{"timeout"}, nil, {"old-timeout"}} {
			t.Run(shell+"/"+strings.Join(append(tools, "watchdog")[:1], ""), func(t *testing.T) {
				old := len(tools) == 1 && tools[0] == "old-timeout"
				if old {
					tools = nil
				}
				n := newFetchNode(t, shell, Addon{Name: "ok", Manifest: []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ok\n")}, tools...)
				if old {
					if err := os.WriteFile(filepath.Join(n.bin, "timeout"), []byte(oldTimeout), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				got := filepath.Join(t.TempDir(), "record")
				stub := "#!/bin/sh\ncase \"$*\" in\n*readyz*) exit 0 ;;\n'create configmap'*) echo 'kind: ConfigMap' ;;\n" +
					"*'-f -'*) cat >" + got + "; test -s " + got + " ;;\n*apply*) echo namespace/ok ;;\nesac\n"
				kubectl := filepath.Join(n.bin, "kubectl")
				if err := os.WriteFile(kubectl, []byte(stub), 0o755); err != nil {
					t.Fatal(err)
				}
				code, out, _ := n.run(30*time.Second, "NODEBOOT_KUBECTL="+kubectl)
				raw, _ := os.ReadFile(got)
				if code != 0 || string(raw) != "kind: ConfigMap\n" {
					t.Errorf("exit %d, kubectl read the record %q, want exit 0 and %q\n%s", code, raw, "kind: ConfigMap\n", out)
				}
			})
		}
	}
}

func TestApplyEndsAtTheStepTimeout(t *testing.T) {
	const stall = "#!/bin/sh\ncase \"$*\" in\n*readyz*) exit 0 ;;\n'create configmap'*) echo 'kind: ConfigMap' ;;\n*'-f -'*) cat >/dev/null ;;\n*apply*) sleep 8 ;;\nesac\n"
	for _, shell := range fetchShells(t) {
		for _, tools := range [][]string{{"timeout"}, nil} {
			t.Run(shell+"/"+strings.Join(append(tools, "watchdog")[:1], ""), func(t *testing.T) {
				n := newFetchNode(t, shell, Addon{Name: "slow", Manifest: []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: slow\n")}, tools...)
				n.timeout = 2
				kubectl := filepath.Join(n.bin, "kubectl")
				if err := os.WriteFile(kubectl, []byte(stall), 0o755); err != nil {
					t.Fatal(err)
				}
				code, out, took := n.run(30*time.Second, "NODEBOOT_KUBECTL="+kubectl)
				if code == 0 || took > 6*time.Second {
					t.Errorf("exit %d after %s, want a failure within the 2 s timeout and the record\n%s", code, took.Round(100*time.Millisecond), out)
				}
			})
		}
	}
}
