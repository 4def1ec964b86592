package hostile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"

	"sigs.k8s.io/yaml"

	"github.com/nodeboot/nodeboot/bootstrap/manifest"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// inSecret stands for a value that must never appear in a message.
const inSecret = "in-s3cret-7c2e"

// inCase is one hostile input: how it is run (the real nodeboot binary, or
// manifest.Parse for the library), what must come out, and the limits it
// must stay within: peak RSS of the process (the library: bytes allocated)
// and wall time. Limits are far below what the unbounded code used (the
// 1 GB and endless cases) yet far above the measured cost, so a loaded CI
// machine does not flake them.
type inCase struct {
	name  string
	args  []string                  // after "nodeboot"; default render -f -
	input func(t *testing.T) []byte // standard input (or the -f file with inFile)
	stdin io.Reader                 // instead of input
	dir   func(t *testing.T, dir string)
	lib   bool // run manifest.Parse instead of the binary
	exit  int
	msg   string // substring of stderr (exit != 0) or "" for none expected
	// stdoutMsg: the command reports on standard output (diff's lines).
	stdoutMsg bool
	out       string // "same" = the example's bytes on stdout
	maxMB     int
	maxDur    time.Duration
	check     func(t *testing.T, dir string, stdout []byte)
}

var inExample []byte

func inBase(t *testing.T) []byte {
	t.Helper()
	if inExample == nil {
		b, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(), "cmd", "nodeboot", "example.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		inExample = b
	}
	return bytes.Clone(inExample)
}

// inMutate replaces old, which must occur once, in the example.
func inMutate(old, new string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		b := inBase(t)
		if bytes.Count(b, []byte(old)) != 1 {
			t.Fatalf("example: %q does not occur once", old)
		}
		return bytes.Replace(b, []byte(old), []byte(new), 1)
	}
}

func inPlus(extra string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte { return append(inBase(t), []byte("---\n"+extra)...) }
}

func inLiteral(s string) func(t *testing.T) []byte {
	return func(*testing.T) []byte { return []byte(s) }
}

func inUTF16(t *testing.T, b []byte, bigEndian bool) []byte {
	t.Helper()
	out := []byte{0xFF, 0xFE}
	if bigEndian {
		out = []byte{0xFE, 0xFF}
	}
	for _, u := range utf16.Encode([]rune(string(b))) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// inList turns the example into one kubectl-style List document.
func inList(t *testing.T) []byte {
	t.Helper()
	var items []any
	for _, doc := range strings.Split(string(inBase(t)), "\n---\n") {
		var o map[string]any
		// The split took the newline that ends each document's last block.
		if err := yaml.Unmarshal([]byte(doc+"\n"), &o); err != nil {
			t.Fatal(err)
		}
		items = append(items, o)
	}
	b, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// inLaughs is the billion-laughs document with n tenfold levels.
func inLaughs(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= n; i++ {
		p := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "l%d: &l%d [%s%s]\n", i, i, strings.Repeat(p+", ", 9), p)
	}
	return b.String()
}

// inEndless is a standard input that never ends.
type inEndless struct{}

func (inEndless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// inLastLine makes the input's last line, without a newline, exactly n
// bytes: the KubeadmConfig's postKubeadmCommands as a flow list (each
// command within the CRD's 10240 bytes). apimachinery's reader dropped such
// a line when n is a multiple of 64 KiB; the commands vanished, exit 0.
func inLastLine(n int) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		b := inBase(t)
		i := bytes.Index(b, []byte("---\napiVersion: bootstrap.cluster.x-k8s.io/v1beta2\nkind: KubeadmConfig"))
		j := bytes.Index(b[i+4:], []byte("\n---\n")) + i + 4
		cfg := string(b[i+4 : j+1])
		cfg = strings.Replace(cfg, "  postKubeadmCommands:\n  - echo \"control plane is up\"\n", "", 1)
		line := "  postKubeadmCommands: ["
		for k := 0; len(line) < n-9000; k++ {
			line += fmt.Sprintf("\"echo %d %s\", ", k, strings.Repeat("z", 8000))
		}
		last := "\"echo last " + strings.Repeat("q", n-len(line)-len("\"echo last \"]")) + "\"]"
		line += last
		if len(line) != n {
			t.Fatalf("last line is %d bytes, want %d", len(line), n)
		}
		return []byte(string(b[:i]) + string(b[j+1:]) + "---\n" + cfg + line)
	}
}

// inHasLast checks the last command of inLastLine arrived.
func inHasLast(n int) func(t *testing.T, _ string, out []byte) {
	return func(t *testing.T, _ string, out []byte) {
		if !bytes.Contains(out, []byte("echo last qqqqqqqqqqqqqqqq")) || !bytes.Contains(out, []byte("echo 0 zzzz")) {
			t.Errorf("the commands of the %d-byte last line are not all in the output", n)
		}
	}
}

func inWrite(t *testing.T, path string, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func inMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// inPair checks -o wrote a regular 0600 pair holding the example's data,
// and no temporary file was left behind.
func inPair(t *testing.T, dir string, want []byte) {
	t.Helper()
	for _, f := range []string{"bootstrap-data", "format"} {
		if m := inMode(t, filepath.Join(dir, f)); m != 0o600 {
			t.Errorf("%s: mode %v, want a regular file -rw-------", f, m)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "bootstrap-data")); !bytes.Equal(got, want) {
		t.Errorf("bootstrap-data: %d bytes, not the rendered %d", len(got), len(want))
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "format")); string(got) != "cloud-config" {
		t.Errorf("format: %q", got)
	}
	inNoTemps(t, dir)
}

func inNoTemps(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left in -o DIR", e.Name())
		}
	}
}

// inDense is the densest ConfigMap under MaxDocumentBytes: four million
// one-digit items.
var inDense = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dense}\nx: [" + strings.Repeat("0,", 4<<20-64) + "0]\n"

// inAgainstOf writes content as diff's --against file.
func inAgainstOf(content string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) { inWrite(t, filepath.Join(dir, "against.yaml"), content, 0o600) }
}

// inAgainst writes a bootstrap data Secret for diff's --against.
func inAgainst(t *testing.T, dir string) {
	t.Helper()
	inWrite(t, filepath.Join(dir, "against.yaml"), "apiVersion: v1\nkind: Secret\ntype: cluster.x-k8s.io/secret\nmetadata: {name: example-control-plane-0, namespace: default}\ndata: {value: eA==, format: Y2xvdWQtY29uZmln}\n", 0o600)
}

func inCases() []inCase {
	const cfg = "KubeadmConfig default/example-control-plane-0: "
	const mb, sec = 1, time.Second
	outside := func(dir string) string { return filepath.Join(filepath.Dir(dir), "outside") }
	return []inCase{
		// The baseline every "same" output is compared with.
		{name: "example renders", input: inBase, exit: 0, out: "same"},

		// Input size: the CLI's 32 MiB, endless sources.
		{name: "-f /dev/zero", args: []string{"render", "-f", "/dev/zero"}, exit: 1, msg: "/dev/zero: larger than 33554432 bytes (manifest.MaxInputBytes)", maxMB: 250},
		{name: "endless stdin", stdin: inEndless{}, exit: 1, msg: "standard input: larger than 33554432 bytes (manifest.MaxInputBytes)", maxMB: 250},
		{name: "endless stdin (validate)", args: []string{"validate", "-f", "-"}, stdin: inEndless{}, exit: 1, msg: "larger than 33554432 bytes", maxMB: 250},
		{name: "endless stdin (diff)", args: []string{"diff", "-f", "-", "--against", "/dev/null"}, stdin: inEndless{}, exit: 1, msg: "larger than 33554432 bytes", maxMB: 250},
		{name: "-f directory", args: []string{"render", "-f", "/"}, exit: 1, msg: "-f /: is a directory"},
		{name: "-f missing", args: []string{"render", "-f", "/nonexistent/in.yaml"}, exit: 1, msg: "no such file or directory"},

		// Per-document size and structure.
		{name: "9 MB document", input: inPlus("apiVersion: v1\nkind: Blob\nmetadata: {name: b}\ndata: " + strings.Repeat("x", 9<<20) + "\n"),
			exit: 1, msg: "document 8: the document starting on line 235 is larger than 8388608 bytes (MaxDocumentBytes)", maxMB: 250},
		{name: "8 MB document of an ignored kind", input: inPlus("apiVersion: example.com/v1\nkind: Blob\nmetadata: {name: b}\ndata: " + strings.Repeat("x", 8<<20-100) + "\n"),
			exit: 0, out: "same", maxMB: 400, maxDur: 120 * sec},
		{name: "4 MB Secret with a big value", input: inPlus("apiVersion: v1\nkind: Secret\nmetadata: {name: big, namespace: default}\nstringData:\n  blob: " + strings.Repeat("x", 4<<20) + "\n"),
			exit: 0, out: "same", maxMB: 600, maxDur: 120 * sec},
		{name: "many tiny documents", input: func(t *testing.T) []byte {
			return append(inBase(t), []byte(strings.Repeat("---\napiVersion: v1\nkind: Note\nmetadata: {name: n}\n", 5000))...)
		}, exit: 0, out: "same", maxDur: 120 * sec},
		{name: "billion laughs", input: inPlus(inLaughs(12)), exit: 1, msg: "document 8: ConfigMap lol: YAML aliases expand the document beyond 8388608 bytes (MaxExpandedBytes)"},
		{name: "billion laughs (library)", lib: true, input: inPlus(inLaughs(12)), exit: 1, msg: "YAML aliases expand the document beyond", maxMB: 20},
		{name: "alias inside its own node", input: inPlus("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: loop}\nx: &a [1, *a]\n"), exit: 1, msg: "refers to a node that contains it"},
		{name: "nested 20000 deep", input: inPlus("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\nx: " + strings.Repeat("[", 20000) + "\n"), exit: 1, msg: "exceeded max depth"},
		// The densest documents under MaxDocumentBytes are refused before
		// they are parsed (they cost 896 MB and 23 s when the tree was built
		// first); --against is read through the same bounded reader as -f.
		{name: "8 MB of one-digit items", input: inPlus(inDense), exit: 1, msg: "document 8: more than 524288 YAML nodes (MaxDocumentNodes), counted before parsing", maxMB: 256, maxDur: 5 * sec},
		{name: "--against /dev/zero", args: []string{"diff", "--against", "/dev/zero"}, exit: 1, msg: "/dev/zero: larger than 33554432 bytes (manifest.MaxInputBytes)", maxMB: 256, maxDur: 5 * sec},
		{name: "--against endless stdin", args: []string{"diff", "--against", "-"}, stdin: inEndless{}, exit: 1, msg: "standard input: larger than 33554432 bytes", maxMB: 256, maxDur: 5 * sec},
		{name: "--against 8 MB of one-digit items", args: []string{"diff", "--against", "DIR/against.yaml"}, dir: inAgainstOf(inDense), exit: 1, msg: "more than 524288 YAML nodes", maxMB: 256, maxDur: 5 * sec},
		{name: "--against billion laughs", args: []string{"diff", "--against", "DIR/against.yaml"}, dir: inAgainstOf(inLaughs(12)), exit: 1, msg: "YAML aliases expand the document beyond", maxMB: 256, maxDur: 5 * sec},
		{name: "--against 9 MB scalar", args: []string{"diff", "--against", "DIR/against.yaml"}, dir: inAgainstOf("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {value: " + strings.Repeat("x", 9<<20) + "}\n"),
			exit: 1, msg: "larger than 8388608 bytes (MaxDocumentBytes)", maxMB: 256, maxDur: 5 * sec},
		{name: "--against Lists nested 3000 deep", args: []string{"diff", "--against", "DIR/against.yaml"},
			dir:  inAgainstOf(strings.Repeat(`{"apiVersion":"v1","kind":"List","items":[`, 3000) + `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}` + strings.Repeat("]}", 3000)),
			exit: 1, msg: "items[0]: a List inside a List is not read", maxMB: 256, maxDur: 5 * sec},

		// The reader never drops bytes.
		{name: "last line of 64 KiB without newline", input: inLastLine(64 << 10), exit: 0, check: inHasLast(64 << 10)},
		{name: "last line of 128 KiB without newline (library)", lib: true, input: inLastLine(128 << 10), exit: 0, check: inHasLast(128 << 10)},
		{name: "document end markers", input: func(t *testing.T) []byte {
			return bytes.ReplaceAll(inBase(t), []byte("\n---\n"), []byte("\n...\n---\n"))
		}, exit: 0, out: "same"},
		{name: "end marker without separator", input: func(t *testing.T) []byte {
			return bytes.ReplaceAll(inBase(t), []byte("\n---\n"), []byte("\n...\n"))
		}, exit: 0, out: "same"},
		{name: "CRLF line ends", input: func(t *testing.T) []byte {
			return bytes.ReplaceAll(inBase(t), []byte("\n---\n"), []byte("\r\n---\r\n"))
		}, exit: 0, out: "same"},
		{name: "CR-only line ends", input: func(t *testing.T) []byte { return bytes.ReplaceAll(inBase(t), []byte("\n"), []byte("\r")) },
			exit: 1, msg: "holds more than one YAML document"},
		{name: "text after a separator", input: inMutate("---\napiVersion: bootstrap.cluster.x-k8s.io/v1beta2\n", "--- !!map\napiVersion: bootstrap.cluster.x-k8s.io/v1beta2\n"),
			exit: 1, msg: "line 52: text after the document separator"},
		{name: "directive", input: func(t *testing.T) []byte { return append([]byte("%YAML 1.1\n---\n"), inBase(t)...) }, exit: 1, msg: "line 1: YAML directives"},

		// Encodings.
		{name: "UTF-8 BOM", input: func(t *testing.T) []byte { return append([]byte("\xEF\xBB\xBF"), inBase(t)...) }, exit: 0, out: "same"},
		{name: "UTF-16LE with BOM", input: func(t *testing.T) []byte { return inUTF16(t, inBase(t), false) }, exit: 0, out: "same"},
		{name: "UTF-16BE with BOM", input: func(t *testing.T) []byte { return inUTF16(t, inBase(t), true) }, exit: 0, out: "same"},
		{name: "UTF-16 without BOM", input: func(t *testing.T) []byte { return inUTF16(t, inBase(t), false)[2:] }, exit: 1, msg: "UTF-16 or UTF-32 without a byte-order mark"},
		{name: "UTF-16 unpaired surrogate", input: func(t *testing.T) []byte { return append(inUTF16(t, inBase(t), false), 0x00, 0xDC) }, exit: 1, msg: "unpaired low surrogate"},
		{name: "UTF-32", input: inLiteral("\x00\x00\xFE\xFF\x00\x00\x00k"), exit: 1, msg: "the input is UTF-32"},
		{name: "invalid UTF-8", input: inMutate("echo \"control plane is up\"", "echo \"\xff\xfe\""), exit: 1, msg: "document 3: "},

		// Duplicate keys: YAML decoders keep one silently.
		{name: "duplicate spec.format", input: inMutate("spec:\n  clusterConfiguration:\n", "spec:\n  format: ignition\n  format: cloud-config\n  clusterConfiguration:\n"),
			exit: 1, msg: "document 3: " + cfg + "spec.format: duplicate key (lines 66 and 67)"},
		{name: "duplicate postKubeadmCommands", input: inMutate("  postKubeadmCommands:\n  - echo \"control plane is up\"\n", "  postKubeadmCommands:\n  - echo \"control plane is up\"\n  postKubeadmCommands:\n  - rm -rf /\n"),
			exit: 1, msg: cfg + "spec.postKubeadmCommands: duplicate key"},
		{name: "duplicate Secret key names no value", input: inPlus("apiVersion: v1\nkind: Secret\nmetadata: {name: dup, namespace: default}\nstringData:\n  token: " + inSecret + "\n  token: " + inSecret + "-2\n"),
			exit: 1, msg: "Secret default/dup: stringData.token: duplicate key"},
		{name: "duplicate annotation (library)", lib: true, input: inMutate("  labels:\n    cluster.x-k8s.io/cluster-name: example\n  ownerReferences:\n  - apiVersion: cluster.x-k8s.io/v1beta2\n    kind: Machine\n    name: example-control-plane-0",
			"  annotations:\n    nodeboot.dev/strict: \"true\"\n    nodeboot.dev/strict: \"false\"\n  labels:\n    cluster.x-k8s.io/cluster-name: example\n  ownerReferences:\n  - apiVersion: cluster.x-k8s.io/v1beta2\n    kind: Machine\n    name: example-control-plane-0"),
			exit: 1, msg: `metadata.annotations["nodeboot.dev/strict"]: duplicate key`},

		// apiVersion and kind: never a silently skipped KubeadmConfig.
		{name: "no kind", input: inPlus("apiVersion: v1\nmetadata: {name: x}\n"), exit: 1, msg: "document 8: object x: not a Kubernetes object: apiVersion and kind are required"},
		{name: "not a mapping", input: inPlus("- just\n- a list\n"), exit: 1, msg: "document 8: not a Kubernetes object: a mapping"},
		{name: "KubeadmConfig v1beta1", input: inMutate("apiVersion: bootstrap.cluster.x-k8s.io/v1beta2\nkind: KubeadmConfig\n", "apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: KubeadmConfig\n"),
			exit: 1, msg: cfg + "apiVersion: nodeboot reads KubeadmConfig only as bootstrap.cluster.x-k8s.io/v1beta2"},
		{name: "KubeadmConfig in another group", input: inMutate("apiVersion: bootstrap.cluster.x-k8s.io/v1beta2\nkind: KubeadmConfig\n", "apiVersion: example.com/v1\nkind: KubeadmConfig\n"),
			exit: 1, msg: "apiVersion: nodeboot reads KubeadmConfig only as"},
		{name: "kind in the wrong case", input: inMutate("\nkind: KubeadmConfig\n", "\nkind: kubeadmconfig\n"), exit: 1, msg: "kind: must be spelt KubeadmConfig"},
		{name: "unknown bootstrap kind", input: inPlus("apiVersion: bootstrap.cluster.x-k8s.io/v1beta2\nkind: KubeadmConfigs\nmetadata: {name: x}\n"), exit: 1, msg: "kind: not a kind of bootstrap.cluster.x-k8s.io that nodeboot reads"},
		{name: "Cluster v1beta1", input: inMutate("apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\n", "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\n"), exit: 1, msg: "apiVersion: nodeboot reads Cluster only as cluster.x-k8s.io/v1beta2"},
		{name: "another API's Cluster is skipped", input: inPlus("apiVersion: postgresql.cnpg.io/v1\nkind: Cluster\nmetadata: {name: db}\nspec: {instances: 3}\n"), exit: 0, out: "same"},
		{name: "unknown kind is skipped", input: inPlus("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {}\n"), exit: 0, out: "same"},
		{name: "kubectl List", input: inList, exit: 0, out: "same"},

		// What the API server's CRD validation refuses, kubectl apply too.
		{name: "CRD: format enum", input: inMutate("spec:\n  clusterConfiguration:\n", "spec:\n  format: "+inSecret+"\n  clusterConfiguration:\n"),
			exit: 1, msg: cfg + "spec.format: Unsupported value: supported values: \"cloud-config\", \"ignition\""},
		{name: "CRD: empty user name", input: inMutate("  - name: ops\n", "  - name: \"\"\n"), exit: 1, msg: cfg + "spec.users[0].name: Invalid value: should be at least 1 chars long"},
		{name: "CRD: file content too long", input: inMutate("      net.ipv4.ip_forward = 1\n", "      "+strings.Repeat("x", 10300)+"\n"), exit: 1, msg: cfg + "spec.files[0].content: Too long"},
		{name: "CRD: layout and diskLayout (CEL)", input: inMutate("  ntp:\n", "  diskSetup:\n    partitions:\n    - {device: /dev/sdb}\n  ntp:\n"),
			exit: 1, msg: cfg + "spec.diskSetup.partitions[0]: Invalid value: exactly one of the fields in [layout diskLayout] must be set"},
		{name: "CRD: validate", args: []string{"validate", "-f", "-"}, input: inMutate("  - name: ops\n", "  - name: \"\"\n"), exit: 1, msg: "spec.users[0].name: Invalid value", stdoutMsg: true},
		{name: "CRD: diff", args: []string{"diff", "-f", "-", "--against", "DIR/against.yaml"}, dir: inAgainst, input: inMutate("  - name: ops\n", "  - name: \"\"\n"), exit: 1, msg: "spec.users[0].name: Invalid value", stdoutMsg: true},
		{name: "mistyped field names no value", input: inMutate("  ntp:\n", "  verbosity: "+inSecret+"\n  ntp:\n"), exit: 1, msg: cfg},

		// Rendered output bounded by what a Secret holds.
		{name: "output larger than a Secret", input: func(t *testing.T) []byte {
			b := inMutate("  files:\n", "  files:\n  - path: /etc/big\n    contentFrom:\n      secret: {name: big, key: blob}\n")(t)
			return append(b, []byte("---\napiVersion: v1\nkind: Secret\nmetadata: {name: big, namespace: default}\nstringData:\n  blob: "+strings.Repeat("y", 1<<20)+"\n")...)
		}, exit: 1, msg: cfg + "rendered bootstrap data is larger than 1048576 bytes (manifest.MaxOutputBytes)"},

		// -o DIR: 0600 files, nothing followed, all or nothing.
		{name: "-o writes a 0600 pair", args: []string{"render", "-o", "DIR"}, exit: 0, check: func(t *testing.T, dir string, _ []byte) {
			inPair(t, dir, inRendered)
		}},
		{name: "-o replaces a world-readable file", args: []string{"render", "-o", "DIR"}, exit: 0,
			dir: func(t *testing.T, dir string) {
				inWrite(t, filepath.Join(dir, "bootstrap-data"), "old", 0o644)
				inWrite(t, filepath.Join(dir, "format"), "old", 0o666)
			},
			check: func(t *testing.T, dir string, _ []byte) { inPair(t, dir, inRendered) }},
		{name: "-o does not follow a symlink at bootstrap-data", args: []string{"render", "-o", "DIR"}, exit: 0,
			dir: func(t *testing.T, dir string) {
				inWrite(t, outside(dir), "victim", 0o644)
				if err := os.Symlink(outside(dir), filepath.Join(dir, "bootstrap-data")); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, dir string, _ []byte) {
				inPair(t, dir, inRendered)
				if b, _ := os.ReadFile(outside(dir)); string(b) != "victim" || inMode(t, outside(dir)) != 0o644 {
					t.Error("the symlink's target was written")
				}
			}},
		{name: "-o does not follow a symlink at format", args: []string{"render", "-o", "DIR"}, exit: 0,
			dir: func(t *testing.T, dir string) {
				inWrite(t, outside(dir), "victim", 0o644)
				if err := os.Symlink(outside(dir), filepath.Join(dir, "format")); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, dir string, _ []byte) {
				inPair(t, dir, inRendered)
				if b, _ := os.ReadFile(outside(dir)); string(b) != "victim" {
					t.Error("the symlink's target was written")
				}
			}},
		{name: "-o on invalid input leaves the old pair", args: []string{"render", "-f", "-", "-o", "DIR"}, input: inMutate("  - name: ops\n", "  - name: \"\"\n"), exit: 1, msg: "spec.users[0].name",
			dir: func(t *testing.T, dir string) {
				inWrite(t, filepath.Join(dir, "bootstrap-data"), "old-data", 0o600)
				inWrite(t, filepath.Join(dir, "format"), "old-format", 0o600)
			},
			check: func(t *testing.T, dir string, _ []byte) {
				for f, want := range map[string]string{"bootstrap-data": "old-data", "format": "old-format"} {
					if b, _ := os.ReadFile(filepath.Join(dir, f)); string(b) != want {
						t.Errorf("%s changed", f)
					}
				}
			}},
		{name: "-o never leaves half a pair", args: []string{"render", "-o", "DIR"}, exit: 1, msg: "format is a directory",
			dir: func(t *testing.T, dir string) {
				inWrite(t, filepath.Join(dir, "bootstrap-data"), "old-data", 0o600)
				if err := os.Mkdir(filepath.Join(dir, "format"), 0o700); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, dir string, _ []byte) {
				if b, _ := os.ReadFile(filepath.Join(dir, "bootstrap-data")); string(b) != "old-data" {
					t.Error("bootstrap-data was replaced though format could not be")
				}
				inNoTemps(t, dir)
			}},
	}
}

// inLaunchEnv makes the test binary a launcher: it runs the command after
// "--" and writes the command's peak RSS to the file the variable names. A
// child forked straight from the test process would report the test's own
// RSS as its peak (Linux carries the high-water mark across fork and exec);
// the launcher is small when it forks, so the figure is the command's.
const inLaunchEnv = "NODEBOOT_HOSTILE_LAUNCH"

func init() {
	out := os.Getenv(inLaunchEnv)
	if out == "" {
		return
	}
	i := slices.Index(os.Args, "--")
	if i < 0 || i+1 >= len(os.Args) {
		os.Exit(125)
	}
	cmd := exec.Command(os.Args[i+1], os.Args[i+2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	_ = cmd.Run()
	if cmd.ProcessState == nil {
		os.Exit(126)
	}
	_ = os.WriteFile(out, []byte(strconv.FormatInt(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss, 10)), 0o600)
	os.Exit(cmd.ProcessState.ExitCode())
}

// inRendered is the example's bootstrap data, from the first case.
var inRendered []byte

// TestHostileInput runs every case against the real nodeboot binary (built
// once into the test's directory) or the library, and reports each case's
// peak memory and time.
func TestHostileInput(t *testing.T) {
	root := testenv.ModuleRoot()
	bin := filepath.Join(t.TempDir(), "nodeboot")
	build := exec.Command("go", "build", "-o", bin, "./cmd/nodeboot")
	build.Dir = root
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building nodeboot: %v\n%s", err, out)
	}
	cases := inCases()
	if len(cases) < 35 {
		t.Fatalf("%d cases, want at least 35", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.maxMB == 0 {
				tc.maxMB = 200
			}
			if tc.maxDur == 0 {
				tc.maxDur = 60 * time.Second
			}
			dir := filepath.Join(t.TempDir(), "out")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if tc.dir != nil {
				tc.dir(t, dir)
			}
			var input []byte
			if tc.input != nil {
				input = tc.input(t)
			}
			var (
				code           int
				stdout, stderr []byte
				peakMB         float64
				took           time.Duration
			)
			if tc.lib {
				code, stdout, stderr, peakMB, took = inLibrary(input)
			} else {
				code, stdout, stderr, peakMB, took = inRun(t, bin, tc, dir, input)
			}
			t.Logf("exit %d, peak %.0f MB, %v", code, peakMB, took.Round(time.Millisecond))
			if code != tc.exit {
				t.Fatalf("exit %d, want %d; stderr: %.600s", code, tc.exit, stderr)
			}
			if tc.stdoutMsg {
				stderr = append(stderr, stdout...)
				stdout = nil
			}
			if tc.msg != "" && !bytes.Contains(stderr, []byte(tc.msg)) {
				t.Errorf("stderr %.600q, want it to contain %q", stderr, tc.msg)
			}
			if tc.exit == 0 && len(stderr) > 0 {
				t.Errorf("unexpected stderr: %.600s", stderr)
			}
			if bytes.Contains(stderr, []byte(inSecret)) {
				t.Errorf("a value is quoted in a message: %.600s", stderr)
			}
			if tc.exit != 0 && !tc.lib && len(stdout) > 0 {
				t.Errorf("%d bytes on stdout for refused input", len(stdout))
			}
			if tc.out == "same" {
				if inRendered == nil {
					inRendered = bytes.Clone(stdout)
				} else if !bytes.Equal(stdout, inRendered) {
					t.Errorf("stdout differs from the example's bootstrap data (%d bytes, want %d): %s", len(stdout), len(inRendered), inFirstDiff(stdout, inRendered))
				}
			}
			if peakMB > float64(tc.maxMB) {
				t.Errorf("peak memory %.0f MB, limit %d MB", peakMB, tc.maxMB)
			}
			if took > tc.maxDur {
				t.Errorf("took %v, limit %v", took, tc.maxDur)
			}
			if tc.check != nil {
				tc.check(t, dir, stdout)
			}
		})
	}
}

func inRun(t *testing.T, bin string, tc inCase, dir string, input []byte) (int, []byte, []byte, float64, time.Duration) {
	t.Helper()
	args := tc.args
	if args == nil {
		args = []string{"render", "-f", "-"}
	}
	args = append([]string(nil), args...)
	for i, a := range args {
		if a == "DIR" {
			args[i] = dir
		} else if strings.HasPrefix(a, "DIR/") {
			args[i] = filepath.Join(dir, a[len("DIR/"):])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), tc.maxDur+30*time.Second)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rssFile := filepath.Join(t.TempDir(), "rss")
	cmd := exec.CommandContext(ctx, self, append([]string{"--", bin}, args...)...)
	cmd.Env = append(os.Environ(), inLaunchEnv+"="+rssFile)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	switch {
	case tc.stdin != nil:
		cmd.Stdin = tc.stdin
	case input != nil:
		cmd.Stdin = bytes.NewReader(input)
	}
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running nodeboot: %v", err)
	}
	code := cmd.ProcessState.ExitCode()
	if ctx.Err() != nil {
		t.Fatalf("nodeboot did not finish within %v", tc.maxDur+30*time.Second)
	}
	kb, err := os.ReadFile(rssFile)
	if err != nil {
		t.Fatalf("the launcher reported no peak memory: %v", err)
	}
	n, err := strconv.ParseInt(string(kb), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	peak := float64(n) / 1024
	return code, stdout.Bytes(), stderr.Bytes(), peak, took
}

// inLibrary runs manifest.Parse and the KubeadmConfig lookup in process:
// its "peak" is the bytes allocated, an upper bound of the heap it needed.
func inLibrary(input []byte) (int, []byte, []byte, float64, time.Duration) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	set, err := manifest.Parse(bytes.NewReader(input))
	var out []byte
	if err == nil {
		var in any
		if in, err = set.Input(""); err == nil {
			out, _ = yaml.Marshal(in)
		}
	}
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	mb := float64(after.TotalAlloc-before.TotalAlloc) / (1 << 20)
	if err != nil {
		return 1, nil, []byte(err.Error()), mb, took
	}
	return 0, out, nil, mb, took
}

func inFirstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d: %.100q, want %.100q", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(la), len(lb))
}
