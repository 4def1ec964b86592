package redact_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/internal/redact"
	"github.com/nodeboot/nodeboot/nodereport"
)

// nodeShell is a shell and the tools redact() runs, as a node may have
// them: dash or BusyBox sh, with GNU or BusyBox sed, tail, tr and cut
// (BusyBox sed's -E is another regex front end than GNU's).
type nodeShell struct {
	name  string
	shell []string
	bin   string
}

func nodeShells(t *testing.T) []nodeShell {
	t.Helper()
	bb := lookPath(t, "busybox")
	tools := []string{"sed", "tail", "tr", "cut", "cat", "mktemp", "rm", "head", "wc", "grep"}
	toolset := func(busybox bool) string {
		bin := t.TempDir()
		for _, tool := range tools {
			to := bb
			if !busybox {
				to = lookPath(t, tool)
			}
			if err := os.Symlink(to, filepath.Join(bin, tool)); err != nil {
				t.Fatal(err)
			}
		}
		return bin
	}
	gnu, busybox := toolset(false), toolset(true)
	dash := lookPath(t, "dash")
	return []nodeShell{
		{"dash+gnu", []string{dash}, gnu},
		{"dash+busybox", []string{dash}, busybox},
		{"busybox-sh+gnu", []string{bb, "sh"}, gnu},
		{"busybox-sh+busybox", []string{bb, "sh"}, busybox},
	}
}

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is needed on the test machine: %v", name, err)
	}
	return p
}

// redactFunction is the redact() shell function of the reporter as nodes
// get it.
func redactFunction(t *testing.T) string {
	t.Helper()
	s := nodereport.Script()
	start := strings.Index(s, "\nredact() {\n")
	if start < 0 {
		t.Fatal("the reporter script defines no redact()")
	}
	end := strings.Index(s[start:], "\n}\n")
	if end < 0 {
		t.Fatal("redact() does not end")
	}
	return s[start : start+end+3]
}

// run pipes in through the real redact() with the node's credential (none
// when empty) and returns what the report would carry, decoded from JSON.
func (n nodeShell) run(t *testing.T, fn, in, credential string, env ...string) string {
	t.Helper()
	conf := t.TempDir()
	if credential != "" {
		if err := os.WriteFile(filepath.Join(conf, "token"), []byte(credential), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	argv := append(append([]string{}, n.shell[1:]...), "-c", `CONF=$1`+"\n"+fn+"redact", "redact", conf)
	cmd := exec.Command(n.shell[0], argv...)
	cmd.Env = append([]string{"PATH=" + n.bin, "TMPDIR=" + t.TempDir()}, env...)
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: redact: %v\n%s", n.name, err, out)
	}
	var s string
	if err := json.Unmarshal([]byte(`"`+string(out)+`"`), &s); err != nil {
		t.Fatalf("%s: redact printed no JSON string content: %v\n%q", n.name, err, out)
	}
	return strings.TrimSuffix(s, "\n")
}

// TestCorpusOnNode: the reporter's redact() catches every case of the
// corpus with every shell and sed, and cuts out exactly what Go does.
func TestCorpusOnNode(t *testing.T) {
	fn := redactFunction(t)
	cs := corpus(t)
	for _, n := range nodeShells(t) {
		t.Run(n.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range cs {
				out := n.run(t, fn, c.In, "")
				if bad := c.check(out); len(bad) > 0 {
					t.Errorf("%s: %s\nin:\n%s\nout:\n%s", c.Name, strings.Join(bad, "; "), c.In, out)
				}
				if want := redact.Text(c.In); out != want {
					t.Errorf("%s: the node and Go differ:\nnode:\n%s\nGo:\n%s", c.Name, out, want)
				}
			}
		})
	}
}

// TestNodeRedactsTheCredential: the node's own credential goes wherever
// it appears, as does a secret split by a control character or carried in
// bytes that are not UTF-8 under a UTF-8 locale.
func TestNodeRedactsTheCredential(t *testing.T) {
	const credential = "c2VjcmV0LWNyZWRlbnRpYWwtdmFsdWUtMDEyMzQ1Njc4OQ"
	fn := redactFunction(t)
	for _, n := range nodeShells(t) {
		t.Run(n.name, func(t *testing.T) {
			out := n.run(t, fn, "echo "+credential+" done\npass\x1b[1mword\x1b[0m=Sup3rS3cret\npassword=ab\xffSup3rS3cret\n", credential, "LC_ALL=C.UTF-8")
			for _, leak := range []string{credential, "Sup3rS3cret"} {
				if strings.Contains(out, leak) {
					t.Errorf("leaks %s: %q", leak, out)
				}
			}
			if !strings.Contains(out, "echo [redacted] done") {
				t.Errorf("lost the context: %q", out)
			}
		})
	}
}

// TestNodeKeepsTheReason: a log that ends in blank lines (or lines of
// blanks) still reports the line that says why; the tail is the last 50
// lines that are not blank.
func TestNodeKeepsTheReason(t *testing.T) {
	fn := redactFunction(t)
	var in strings.Builder
	for i := range 60 {
		in.WriteString("line " + string(rune('a'+i%26)) + "\n")
	}
	in.WriteString("error: the reason\n")
	in.WriteString(strings.Repeat("\n", 30) + strings.Repeat("   \n", 30) + strings.Repeat("\t\r\n", 10))
	for _, n := range nodeShells(t) {
		t.Run(n.name, func(t *testing.T) {
			out := n.run(t, fn, in.String(), "")
			lines := strings.Split(out, "\n")
			if len(lines) != 50 || lines[49] != "error: the reason" {
				t.Fatalf("got %d lines ending %q, want 50 ending with the reason", len(lines), lines[len(lines)-1])
			}
		})
	}
}
