package cloudinit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
)

// pyyaml runs a Python program that reads in (JSON) on stdin and answers
// JSON on stdout, with the PyYAML that Debian's cloud-init depends on (so
// it is the loader cloud-init reads user data with; .ci/run installs it).
// -short skips the caller; a missing python3 or PyYAML fails it.
func pyyaml(t *testing.T, program string, in any) []byte {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not running PyYAML")
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/python3", "-c", program)
	cmd.Stdin = strings.NewReader(string(data))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 with PyYAML: %v\n%s", err, stderr.String())
	}
	return out
}

// pyyamlReadings asks PyYAML, the loader cloud-init uses, how it reads each
// value written plain as a mapping value ("k: v") and as a mapping key.
const pyyamlReadings = `
import json, sys, yaml
def classify(doc, want, key):
    try:
        d = yaml.safe_load(doc)
    except Exception:
        return "broken"
    if not isinstance(d, dict) or len(d) != 1:
        return "changed"
    k, v = next(iter(d.items()))
    got = k if key else v
    if not isinstance(got, str):
        return "typed"
    return "same" if got == want else "changed"
out = []
for s in json.load(sys.stdin):
    out.append([classify("k: " + s + "\n", s, False), classify(s + ":\n  k: v\n", s, True)])
json.dump(out, sys.stdout)
`

func corpus() []string {
	prefixes := []string{"", "-", "- ", "?", "? ", ":", "::", ",", "[", "]", "{", "}", "#", "&a ", "*a", "!", "!!str ", "|", ">", "'", "\"", "%", "@", "`", " ", "\t", "~", "=", "<", "é", "✓"}
	bodies := []string{"", "a", "ALL=(ALL) NOPASSWD: ALL", "ALL=(ALL) NOPASSWD:ALL", "Ops: on-call #2", "a#b", "a #b", "a:b", "a: b", "a:", "'q'", "\"q\"", "a'b", "a\"b",
		"a\tb", "yes", "No", "on", "null", "~", "0644", "644", "1e3", "0x1F", ".inf", "1.5", "1_000", "true", "[1, 2]", "{a: b}", "a,b", "a[b]", "a{b}", "C:\\k\\node.json", "c:/k/azure.json",
		"ssh-ed25519 AAAA x@y", "root:root", "/dev/disk/by-id/x:y", "*", "&", "a&b", "a*b", "a!b", "a%b", "a@b", "a`b", "a|b", "a>b", "-a", "--v=5", "a -b", "🙂"}
	suffixes := []string{"", " ", ":", " #", "#", ",", "\t", "'", "\"", " x"}
	var out []string
	seen := map[string]bool{}
	for _, p := range prefixes {
		for _, b := range bodies {
			for _, s := range suffixes {
				v := p + b + s
				if v != "" && !seen[v] {
					seen[v] = true
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// TestPlainReadingMatchesPyYAML: for thousands of values mixing every YAML
// indicator, comment, quote, tab and YAML 1.1 type, nodeboot's reading of a
// plain scalar (which decides warnings and corrections) is PyYAML's.
func TestPlainReadingMatchesPyYAML(t *testing.T) {
	values := corpus()
	out := pyyaml(t, pyyamlReadings, values)
	var want [][2]string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(values) {
		t.Fatalf("PyYAML answered %d readings for %d values: %v", len(want), len(values), err)
	}
	names := map[reading]string{readsSame: "same", readsTyped: "typed", readsChanged: "changed", readsBroken: "broken"}
	bad := 0
	for i, v := range values {
		for j, key := range []bool{false, true} {
			r, _ := plainReading(v, key)
			got, py := names[r], want[i][j]
			if key && got != "same" && py != "same" {
				// As a key, a misread value turns the rest of the mapping
				// into something else; whether PyYAML still loads that is
				// beside the point: nodeboot warns and quotes either way.
				py = got
			}
			if got != py {
				bad++
				if bad <= 400 {
					t.Errorf("%q (key %v): nodeboot reads it %s, PyYAML %s", v, key, got, want[i][j])
				}
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d readings differ from PyYAML", bad, 2*len(values))
	}
	t.Logf("%d values, each as a value and as a key, read as PyYAML reads them", len(values))
}

// pyyamlLiterals reads each content as CABPK writes file contents: a
// literal block six spaces in, followed by the next key.
const pyyamlLiterals = `
import json, sys, yaml
out = []
for doc in json.load(sys.stdin):
    try:
        d = yaml.safe_load(doc)
        out.append(d.get("content") if isinstance(d, dict) and set(d) == {"content", "next"} else None)
    except Exception:
        out.append(None)
json.dump(out, sys.stdout)
`

// TestLiteralReadingMatchesPyYAML: what nodeboot expects cloud-init to read
// from a file's content (and so whether it warns and re-encodes) is what
// PyYAML reads.
func TestLiteralReadingMatchesPyYAML(t *testing.T) {
	lines := []string{"", "a", "  a", "    b", "\ta", "a\t", "# c", "k: v", "é ✓", "a\r", "x\u2028y", "x\u0085y", "\x1b[0m", "a\x00b", "   "}
	var contents []string
	for _, a := range lines {
		for _, b := range lines {
			for _, end := range []string{"", "\n", "\n\n", "\r\n"} {
				contents = append(contents, a+"\n"+b+end, a+end)
			}
		}
	}
	docs := make([]string, len(contents))
	for i, c := range contents {
		docs[i] = "content: |\n      " + strings.ReplaceAll(c, "\n", "\n      ") + "\nnext: 1\n"
	}
	out := pyyaml(t, pyyamlLiterals, docs)
	var want []*string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(contents) {
		t.Fatalf("PyYAML answered %d readings for %d contents: %v", len(want), len(contents), err)
	}
	bad := 0
	for i, c := range contents {
		got, _, ok, _ := literalReading(c)
		switch {
		case want[i] == nil && ok:
			t.Errorf("%q: nodeboot reads %q, PyYAML fails or reads other keys", c, got)
			bad++
		case want[i] != nil && !ok:
			t.Errorf("%q: nodeboot expects a failure, PyYAML reads %q", c, *want[i])
			bad++
		case want[i] != nil && *want[i] != got:
			t.Errorf("%q: nodeboot reads %q, PyYAML %q", c, got, *want[i])
			bad++
		}
		if bad > 40 {
			t.FailNow()
		}
	}
	t.Logf("%d contents read as PyYAML reads them", len(contents))
}

// cloudInitReads has cloud-init's own template step (a document with a
// per-node value is a jinja template) and PyYAML read each rendered plain
// document, and answers, for each, the content of /f, the gecos of user u,
// the NTP servers and runcmd, or the error.
const cloudInitReads = `
import json, sys, yaml
from cloudinit import templater
def s(v):
    # A value read as another type shows as one, not as the string.
    return v if isinstance(v, str) else "<%s %r>" % (type(v).__name__, v)
out = []
for doc in json.load(sys.stdin):
    try:
        kind, render, rest = templater.detect_template(doc)
        if kind == "jinja":
            doc = render(rest, {"v1": {"local_hostname": "node-1"}})
        d = yaml.safe_load(doc)
        f = [w for w in d["write_files"] if w["path"] == "/f"][0]
        out.append({"content": s(f["content"]), "gecos": s(d["users"][0]["gecos"]), "keys": [s(k) for k in d["users"][0]["ssh_authorized_keys"]],
                    "ntp": [s(n) for n in d["ntp"]["servers"]], "runcmd": [s(c) for c in d["runcmd"]]})
    except Exception as e:
        out.append({"error": str(e)})
json.dump(out, sys.stdout)
`

// TestPlainReadByCloudInit: every value of the plain dialect reaches
// cloud-init as the Plan says, with and without a per-node value (which
// makes the document a jinja template that yaml.v3 reads back once before
// writing): text of several lines that starts with a blank, a tab or a line
// break, line breaks alone, and "=" and "<<", which PyYAML reads as tags
// when they are written plain.
func TestPlainReadByCloudInit(t *testing.T) {
	values := []string{"  key: v\n", " lead\n", "\tx\n", "\nx\n", "\n", "\n\n", "\n\n\nx", " \n", "=", "<<", "=\n", "<<\n", "a\n\n", "x \n", "a: =", "= a",
		"plain", "k: v\n  nested\n", "", " ", "\t", "#!/bin/sh\n\necho hi\n", "é\n ✓\n",
		// PyYAML's timestamps and sexagesimal numbers yaml.v3 does not know
		// (an impossible date fails safe_load outright), and the line
		// breaks only PyYAML has.
		"2024-02-30", "2025-01-01 00:00:00 +00:00", "2001-12-14 21:59:43 Z", "2001-12-14t21:59:43.10-05:00", "1:20", "1:20.5", "-1_0:20",
		"\u2028x\n", "\u2029x\n", "\u2028 x\n", "\u2028", "x\u2028y", "x\u2029y\n", "\u0085x\n", "a\u0085b"}
	// typed are the values whose gecos and NTP server are the value itself
	// rather than the value and "x" (which makes most of them plain text).
	typed := map[string]bool{"=": true, "<<": true, "2024-02-30": true, "2025-01-01 00:00:00 +00:00": true, "2001-12-14 21:59:43 Z": true,
		"2001-12-14t21:59:43.10-05:00": true, "1:20": true, "1:20.5": true, "-1_0:20": true}
	type reading struct {
		Content, Gecos, Error string
		Keys, NTP, RunCmd     []string
	}
	var docs []string
	for _, templated := range []bool{false, true} {
		for _, v := range values {
			p := &provisioning.Plan{
				Files:    []provisioning.File{{Path: "/f", Content: v}},
				Users:    []provisioning.User{{Name: "u", Gecos: strings.TrimSpace(strings.ReplaceAll(v, "\n", "")) + "x", SSHAuthorizedKeys: []string{"ssh-ed25519 AAAA k", v + "k"}}},
				NTP:      &provisioning.NTP{Servers: []string{strings.TrimSpace(strings.ReplaceAll(v, "\n", "")) + "x"}},
				Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}},
			}
			if v = strings.TrimSpace(strings.ReplaceAll(v, "\n", "")); typed[v] {
				p.Users[0].Gecos, p.NTP.Servers[0] = v, v
			}
			if templated {
				p.Files = append(p.Files, provisioning.File{Path: "/t", Template: provisioning.Text{provisioning.Literal("name="), provisioning.Value(provisioning.NodeName)}})
			}
			out, err := (&Renderer{}).Render(p, provisioning.Options{})
			if err != nil {
				t.Fatalf("%q (templated %v): %v", p.Files[0].Content, templated, err)
			}
			docs = append(docs, string(out.Data))
		}
	}
	var got []reading
	if err := json.Unmarshal(pyyaml(t, cloudInitReads, docs), &got); err != nil || len(got) != len(docs) {
		t.Fatalf("cloud-init answered %d readings for %d documents: %v", len(got), len(docs), err)
	}
	for i, r := range got {
		v, templated := values[i%len(values)], i >= len(values)
		one := strings.TrimSpace(strings.ReplaceAll(v, "\n", ""))
		gecos := one + "x"
		if typed[one] {
			gecos = one
		}
		switch {
		case r.Error != "":
			t.Errorf("%q (templated %v): cloud-init cannot read the document: %s", v, templated, r.Error)
		case r.Content != v:
			t.Errorf("%q (templated %v): cloud-init writes %q", v, templated, r.Content)
		case r.Gecos != gecos || len(r.NTP) != 1 || r.NTP[0] != gecos:
			t.Errorf("%q (templated %v): gecos %q, NTP servers %q, want %q", v, templated, r.Gecos, r.NTP, gecos)
		case len(r.Keys) != 2 || r.Keys[1] != v+"k":
			t.Errorf("%q (templated %v): SSH keys %q", v, templated, r.Keys)
		case len(r.RunCmd) == 0:
			t.Errorf("%q (templated %v): no runcmd", v, templated)
		}
	}
}

// pyyamlMapping answers, for each document, whether PyYAML's safe_load (the
// reader cloud-init keeps a cloud-config part with) gives a mapping.
const pyyamlMapping = `
import json, sys, yaml
out = []
for doc in json.load(sys.stdin):
    try:
        out.append(isinstance(yaml.safe_load(doc), dict))
    except Exception:
        out.append(False)
json.dump(out, sys.stdout)
`

// TestUserCloudConfigAsCloudInitReadsIt: the plain dialect carries a
// user's cloud-config part exactly when cloud-init can read it as a
// mapping; a part it would drop with a log line only is refused at its
// field.
func TestUserCloudConfigAsCloudInitReadsIt(t *testing.T) {
	docs := []string{
		"#cloud-config\nruncmd:\n- echo user\n",
		"#cloud-config\nruncmd:\n- echo user\n---\nruncmd:\n- echo second\n",
		"---\nruncmd:\n- echo one\n",
		"runcmd:\n- echo one\n...\n",
		"runcmd: !cmds\n- echo tagged\n",
		"runcmd: !!python/object:os.system [id]\n",
		"a: 1\na: 2\n",
		"a: !!binary aGk=\nb: !!set {x: null}\nc: !!timestamp 2001-12-14\n",
		"base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",
		"- a\n- b\n",
		"just text\n",
		"a: [unclosed\n",
		// What safe_load refuses only as it builds the values.
		"a: =\n", "= : x\n", "a: <<\n", "a: 2024-02-30\n", "a: 2024-02-29\n", "a: 2023-02-29 10:00:00\n", "a: 2001-12-14 25:00:00\n",
		"a: 0000-01-01\n", "a: 2001-12-14 21:59:43.5 -05:30\n",
		"a: !!int abc\n", "a: !!int 0x1F\n", "a: !!int 1_000\n", "a: 0x_\n", "a: 0b_\n", "a: !!float x\n", "a: !!float 1e5\n", "a: !!float .inf\n",
		"a: !!bool maybe\n", "a: !!bool On\n", "a: !!null anything\n", "a: !!timestamp tomorrow\n",
		"a: !!binary 'not base64!'\n", "a: !!binary YQ\n", "a: !!binary YQ==\n", "a: !!binary YWI=\n", "a: !!binary é\n",
		"? [a, b]\n: c\n", "? {a: 1}\n: c\n", "k: &l [1]\n*l : x\n", "<<: 1\n", "<<: [1]\n", "<<: [{a: 1}]\nb: 2\n", "a: !!merge x\n",
		"a: ! x\n", "a: !!str 1\n", "a: !!seq x\n", "a: !!map [1]\n", "a: !!set [1]\n",
		"users:\n- name: ops\n  plain_text_passwd: !Hunter2-s3cret\n",
	}
	var got []bool
	for _, d := range docs {
		p := &provisioning.Plan{
			Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}},
			UserData: []provisioning.UserData{{Type: provisioning.UserDataCloudConfig, Content: d}},
		}
		_, err := (&Renderer{}).Render(p, provisioning.Options{})
		var ps provisioning.Problems
		switch {
		case err == nil:
			got = append(got, true)
		case errors.As(err, &ps) && len(ps.Errors()) == 1 && ps.Errors()[0].Path.String() == "userData[0].content":
			// The part may hold a password where a tag or value is
			// wrong: the message names the construct and its line.
			if strings.Contains(err.Error(), "Hunter2") {
				t.Errorf("%q: the error shows the content: %v", d, err)
			}
			got = append(got, false)
		default:
			t.Fatalf("%q: %v", d, err)
		}
	}
	var want []bool
	if err := json.Unmarshal(pyyaml(t, pyyamlMapping, docs), &want); err != nil || len(want) != len(docs) {
		t.Fatalf("PyYAML answered %d for %d documents: %v", len(want), len(docs), err)
	}
	for i, d := range docs {
		if got[i] != want[i] {
			t.Errorf("%q: nodeboot carries it %v, cloud-init reads a mapping from it %v", d, got[i], want[i])
		}
	}
}

// cloudInitBootstrapLine answers, for each CABPK-dialect document, the last
// runcmd line cloud-init runs (after its jinja step), or null when it reads
// nothing.
const cloudInitBootstrapLine = `
import json, sys, yaml
from cloudinit import templater
out = []
for doc in json.load(sys.stdin):
    try:
        kind, render, rest = templater.detect_template(doc)
        if kind == "jinja":
            doc = render(rest, {"v1": {"local_hostname": "node-1"}, "ds": {"meta_data": {"local_hostname": "node-1"}}})
        out.append(yaml.safe_load(doc)["runcmd"][-1])
    except Exception:
        out.append(None)
json.dump(out, sys.stdout)
`

// TestCABPKBootstrapLineWarnings: where cloud-init would run another
// bootstrap command than the Plan's (a line break YAML folds, a control
// character PyYAML refuses, undefined jinja), CABPK's dialect warns at the
// command, with corrections too (none rewrites the bootstrap line); where
// it runs the Plan's, it does not.
func TestCABPKBootstrapLineWarnings(t *testing.T) {
	const sentinel = "/run/cluster-api/bootstrap-success.complete"
	scripts := []string{
		"kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml",
		"kubeadm join --v=\x01",
		"kubeadm join \u2028--dry-run",
		"kubeadm join\r--dry-run",
		"kubeadm join\n--dry-run",
		"kubeadm join --node-name {{ x }}",
		"kubeadm join --node-name {{ v1.local_hostname }}",
		"kubeadm join 'quoted' \"double\" #not-a-comment",
		"kubeadm join\t--v=5",
	}
	type render struct {
		script      string
		role        provisioning.Role
		corrections bool
		warned      bool
	}
	var renders []render
	var docs []string
	for _, s := range scripts {
		for _, role := range []provisioning.Role{provisioning.RoleJoinWorker, provisioning.RoleInit} {
			for _, corrections := range []bool{false, true} {
				p := &provisioning.Plan{Role: role, Sentinel: sentinel, Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: s}}}
				out, err := (&Renderer{}).Render(p, provisioning.Options{Version: VersionCABPK, Corrections: corrections})
				if err != nil {
					t.Fatalf("%q: %v", s, err)
				}
				warned := false
				for _, w := range out.Warnings {
					warned = warned || w.Path.String() == "commands[0]"
				}
				renders = append(renders, render{s, role, corrections, warned})
				docs = append(docs, string(out.Data))
			}
		}
	}
	var got []*string
	if err := json.Unmarshal(pyyaml(t, cloudInitBootstrapLine, docs), &got); err != nil || len(got) != len(docs) {
		t.Fatalf("cloud-init answered %d for %d documents: %v", len(got), len(docs), err)
	}
	for i, r := range renders {
		want := r.script + " && echo success > " + sentinel
		if strings.Contains(r.script, "{{ v1.local_hostname }}") {
			want = strings.ReplaceAll(want, "{{ v1.local_hostname }}", "node-1")
		}
		same := got[i] != nil && *got[i] == want
		if same == r.warned {
			g := "nothing"
			if got[i] != nil {
				g = fmt.Sprintf("%q", *got[i])
			}
			t.Errorf("%q (%s, corrections %v): cloud-init runs %s, warning at commands[0] %v", r.script, r.role, r.corrections, g, r.warned)
		}
	}
}
