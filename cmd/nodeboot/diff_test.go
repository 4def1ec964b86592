package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nodeboot/nodeboot/bootstrap/manifest"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// secretYAML is a bootstrap data Secret as kubectl get secret -o yaml prints it.
func secretYAML(name, typ string, data map[string][]byte) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: default\n  ownerReferences:\n  - apiVersion: bootstrap.cluster.x-k8s.io/v1beta2\n    kind: KubeadmConfig\n    name: %s\n    uid: 1\n", name, name)
	if typ != "" {
		fmt.Fprintf(&sb, "type: %s\n", typ)
	}
	sb.WriteString("data:\n")
	for _, k := range []string{"format", "value", "other"} {
		if v, ok := data[k]; ok {
			fmt.Fprintf(&sb, "  %s: %s\n", k, base64.StdEncoding.EncodeToString(v))
		}
	}
	return sb.String()
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret.yaml")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func runDiff(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"diff"}, args...), nil, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

var (
	pemKeyBlock = regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----(.*?)-----END [A-Z ]*PRIVATE KEY-----`)
	tokenRE     = regexp.MustCompile(`[a-z0-9]{6}\.[a-z0-9]{16}`)
	alnumRun    = regexp.MustCompile(`[A-Za-z0-9]{16,}`)
	tokenLine   = regexp.MustCompile(`\btoken: *"?([a-z0-9]{6}\.[a-z0-9]{10,})`)
)

// vectorSecrets are what must never show in a diff: every run of 16 or more
// base64 letters of every private key in the vector's input Secrets (so
// percent-encoded and line-wrapped copies are caught too) that is not also in
// a certificate or public key (an EC private key embeds its public point),
// and every token.
func vectorSecrets(t *testing.T, dir string) []string {
	t.Helper()
	input, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
	require.NoError(t, err)
	set, err := manifest.Parse(bytes.NewReader(input))
	require.NoError(t, err)
	var out []string
	texts := []string{string(input)}
	for _, s := range set.Secrets {
		for _, v := range s {
			texts = append(texts, string(v))
		}
	}
	public := ""
	for _, text := range texts {
		public += pemKeyBlock.ReplaceAllString(text, "")
	}
	public = strings.NewReplacer("\n", "", " ", "").Replace(public)
	for _, text := range texts {
		for _, m := range pemKeyBlock.FindAllStringSubmatch(text, -1) {
			for _, run := range alnumRun.FindAllString(m[1], -1) {
				if !strings.Contains(public, run) {
					out = append(out, run)
				}
			}
		}
		out = append(out, tokenRE.FindAllString(text, -1)...)
		for _, m := range tokenLine.FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// changeOneByte changes the first "kubeadm" of the data to "kubeadn" and
// returns the line that holds it, numbered as diff numbers lines (Ignition
// indented).
func changeOneByte(t *testing.T, data []byte) ([]byte, int, string) {
	t.Helper()
	i := bytes.Index(data, []byte("kubeadm"))
	require.GreaterOrEqual(t, i, 0)
	changed := append([]byte(nil), data...)
	changed[i+6] = 'n'
	text := changed
	if json.Valid(changed) {
		var buf bytes.Buffer
		require.NoError(t, json.Indent(&buf, changed, "", "  "))
		text = buf.Bytes()
	}
	for n, l := range strings.Split(string(text), "\n") {
		if strings.Contains(l, "kubeadn") {
			return changed, n + 1, l
		}
	}
	t.Fatal("changed line not found")
	return nil, 0, ""
}

func TestDiffVectors(t *testing.T) {
	for _, v := range append(testenv.Vectors(t, "cc-"), testenv.Vectors(t, "ign-")...) {
		t.Run(filepath.Base(v), func(t *testing.T) {
			input := filepath.Join(v, "input.yaml")
			data, err := os.ReadFile(filepath.Join(v, "bootstrap-data"))
			require.NoError(t, err)
			format, err := os.ReadFile(filepath.Join(v, "format"))
			require.NoError(t, err)
			name := filepath.Base(v)
			secrets := vectorSecrets(t, v)
			noSecrets := func(t *testing.T, out string) {
				t.Helper()
				for _, s := range secrets {
					require.NotContains(t, out, s, "a private key or token leaked into the output: %s", s)
				}
			}

			// What CABPK wrote compares identical.
			same := writeTemp(t, secretYAML(name, "cluster.x-k8s.io/secret", map[string][]byte{"value": data, "format": format}))
			code, stdout, stderr := runDiff(t, "-f", input, "--against", same)
			require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
			require.Equal(t, "KubeadmConfig default/"+name+": identical\nidentical: 1/1\n", stdout)
			code, stdout, _ = runDiff(t, "-f", input, "--against", same, "--diff", "--name", name)
			require.Equal(t, 0, code)
			require.Equal(t, "KubeadmConfig default/"+name+": identical\nidentical: 1/1\n", stdout)

			// One byte changed: reported with its line, both sides.
			changed, line, text := changeOneByte(t, data)
			other := writeTemp(t, secretYAML(name, "cluster.x-k8s.io/secret", map[string][]byte{"value": changed, "format": format}))
			code, stdout, _ = runDiff(t, "-f", input, "--against", other)
			require.Equal(t, 1, code)
			require.Contains(t, stdout, fmt.Sprintf("KubeadmConfig default/%s: differs: line %d: Secret default/%s has %q, rendered %q\n",
				name, line, name, text, strings.Replace(text, "kubeadn", "kubeadm", 1)))
			require.True(t, strings.HasSuffix(stdout, "identical: 0/1\n"), stdout)
			noSecrets(t, stdout)

			code, stdout, _ = runDiff(t, "-f", input, "--against", other, "--diff")
			require.Equal(t, 1, code)
			require.Contains(t, stdout, "\n-"+text+"\n")
			require.Contains(t, stdout, "\n+"+strings.Replace(text, "kubeadn", "kubeadm", 1)+"\n")
			require.Contains(t, stdout, fmt.Sprintf("@@ -%d", max(line-3, 1)))
			noSecrets(t, stdout)

			// Against a Secret holding almost nothing, every rendered line is
			// in the diff: none may carry a key or a token.
			empty := writeTemp(t, secretYAML(name, "cluster.x-k8s.io/secret", map[string][]byte{"value": []byte("{}"), "format": format}))
			code, stdout, _ = runDiff(t, "-f", input, "--against", empty, "--diff")
			require.Equal(t, 1, code)
			require.Greater(t, strings.Count(stdout, "\n+"), 20)
			noSecrets(t, stdout)
			if bytes.Contains(data, []byte("PRIVATE")) {
				require.Contains(t, stdout, redacted)
			}
		})
	}
}

func TestDiffNotBootstrapData(t *testing.T) {
	v := filepath.Join(testenv.VectorsDir(t), "cc-join-worker-minimal-v1.33")
	input := filepath.Join(v, "input.yaml")
	const name = "cc-join-worker-minimal-v1.33"
	tests := []struct {
		name, secret, want string
		stderr             bool
	}{
		{"wrong type", secretYAML(name, "Opaque", map[string][]byte{"value": []byte("x"), "format": []byte("cloud-config")}),
			`KubeadmConfig default/` + name + `: error: Secret default/` + name + `: type: "Opaque": not bootstrap data`, false},
		{"no type", secretYAML(name, "", map[string][]byte{"value": []byte("x"), "format": []byte("cloud-config")}),
			`type: "": not bootstrap data`, false},
		{"no value", secretYAML(name, "cluster.x-k8s.io/secret", map[string][]byte{"format": []byte("cloud-config"), "other": []byte("x")}),
			`KubeadmConfig default/` + name + `: error: Secret default/` + name + `: data.value: not found: not bootstrap data`, false},
		{"no format", secretYAML(name, "cluster.x-k8s.io/secret", map[string][]byte{"value": []byte("x")}),
			`data.format: not found: not bootstrap data`, false},
		{"no data at all", "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\ntype: cluster.x-k8s.io/secret\n", "data.value: not found", false},
		{"a ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {value: x}\n", "v1 ConfigMap is not a Secret", true},
		{"not YAML", "value: [\n", "document 1: ", true},
		{"bad base64", "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\ndata: {value: '!!!'}\n", "document 1: Secret: ", true},
		{"empty file", "", "no Secret in the file", true},
		{"no Secret for the config", secretYAML("other", "cluster.x-k8s.io/secret", nil) + "---\n" + secretYAML("other2", "cluster.x-k8s.io/secret", nil),
			"KubeadmConfig default/" + name + ": error: no bootstrap data Secret for it in ", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runDiff(t, "-f", input, "--against", writeTemp(t, tt.secret))
			require.Equal(t, 1, code, "stdout: %s\nstderr: %s", stdout, stderr)
			if tt.stderr {
				require.Contains(t, stderr, tt.want)
				require.Empty(t, stdout)
			} else {
				require.Contains(t, stdout, tt.want)
				require.True(t, strings.HasSuffix(stdout, "identical: 0/1\n"), stdout)
			}
		})
	}
	code, _, stderr := runDiff(t, "-f", input)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--against SECRET.yaml is required")
	code, _, stderr = runDiff(t, "-f", input, "--against", filepath.Join(t.TempDir(), "missing.yaml"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "missing.yaml")
}

// TestDiffCannotRender: input nodeboot refuses is reported with its field.
func TestDiffCannotRender(t *testing.T) {
	in := mutate(t, "  - path: /etc/sysctl.d/90-kubernetes.conf\n", "  - path: etc/sysctl.conf\n")
	p := filepath.Join(t.TempDir(), "in.yaml")
	require.NoError(t, os.WriteFile(p, []byte(in), 0o600))
	sec := writeTemp(t, secretYAML("example-control-plane-0", "cluster.x-k8s.io/secret", map[string][]byte{"value": []byte("x"), "format": []byte("cloud-config")}))
	code, stdout, _ := runDiff(t, "-f", p, "--against", sec, "--strict")
	require.Equal(t, 1, code)
	require.Contains(t, stdout, cfgRef+"cannot render: "+cfgRef+"spec.files[0].path: must be absolute (nodeboot.dev/strict)\n")
	require.True(t, strings.HasSuffix(stdout, "identical: 0/1\n"))
}

// TestDiffSeveralConfigs: a file with two configs and a List of their two
// Secrets (kubectl get secret -o yaml of several) pairs them by name.
func TestDiffSeveralConfigs(t *testing.T) {
	dir := testenv.VectorsDir(t)
	a, b := "cc-join-worker-minimal-v1.33", "cc-join-worker-ntp-users-v1.28"
	var input strings.Builder
	var items []string
	for _, n := range []string{a, b} {
		in, err := os.ReadFile(filepath.Join(dir, n, "input.yaml"))
		require.NoError(t, err)
		input.WriteString("---\n" + string(in))
		data, err := os.ReadFile(filepath.Join(dir, n, "bootstrap-data"))
		require.NoError(t, err)
		if n == b {
			data = append(data, '\n')
		}
		js, err := yamlToJSON(secretYAML(n, "cluster.x-k8s.io/secret", map[string][]byte{"value": data, "format": []byte("cloud-config")}))
		require.NoError(t, err)
		items = append(items, js)
	}
	p := filepath.Join(t.TempDir(), "in.yaml")
	require.NoError(t, os.WriteFile(p, []byte(input.String()), 0o600))
	list := writeTemp(t, `{"apiVersion":"v1","kind":"List","items":[`+strings.Join(items, ",")+`]}`)
	code, stdout, stderr := runDiff(t, "-f", p, "--against", list)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stdout, "KubeadmConfig default/"+a+": identical\n")
	require.Contains(t, stdout, "KubeadmConfig default/"+b+": differs: line ")
	require.True(t, strings.HasSuffix(stdout, "identical: 1/2\n"), stdout)
	code, stdout, _ = runDiff(t, "-f", p, "--against", list, "--name", a)
	require.Equal(t, 0, code)
	require.Equal(t, "KubeadmConfig default/"+a+": identical\nidentical: 1/1\n", stdout)
}

func yamlToJSON(y string) (string, error) {
	var v any
	if err := yaml.Unmarshal([]byte(y), &v); err != nil {
		return "", err
	}
	js, err := json.Marshal(v)
	return string(js), err
}

func TestDiffLines(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"a b c", "a b c", "  a  b  c"},
		{"a b c", "a x c", "  a -b +x  c"},
		{"", "a", " +a"},
		{"a", "", " -a"},
		{"a b c d", "b d e", " -a  b -c  d +e"},
		{"x a b c y", "x c b a y", "  x -a -b  c +b +a  y"},
	}
	for _, tt := range tests {
		a, b := strings.Fields(tt.a), strings.Fields(tt.b)
		var sb strings.Builder
		for _, e := range diffLines(a, b) {
			sb.WriteByte(' ')
			sb.WriteByte(e.op)
			if e.op == '+' {
				sb.WriteString(b[e.b])
			} else {
				sb.WriteString(a[e.a])
			}
		}
		require.Equal(t, tt.want, sb.String(), "%q -> %q", tt.a, tt.b)
	}
	// Random edits: applying the script to a gives b, and it is minimal-ish.
	a := strings.Split(strings.Repeat("l1 l2 l3 l4 l5 l6 l7 ", 50), " ")
	b := append([]string(nil), a...)
	b[10], b[200] = "changed", "changed"
	b = append(b[:100], b[103:]...)
	var got []string
	changes := 0
	for _, e := range diffLines(a, b) {
		switch e.op {
		case ' ':
			got = append(got, a[e.a])
		case '+':
			got = append(got, b[e.b])
			changes++
		default:
			changes++
		}
	}
	require.Equal(t, b, got)
	require.LessOrEqual(t, changes, 7)
}

func TestRedactLines(t *testing.T) {
	in := strings.Split(`-   path: /etc/kubernetes/pki/sa.key
    encoding: base64
    content: |
      c2VjcmV0a2V5bWF0ZXJpYWwxMjM0NTY3ODkw
      bW9yZQ==
-   path: /etc/x.key
    content: c2VjcmV0
-   path: /etc/other
    content: "-----BEGIN RSA PRIVATE KEY-----\nMIIsecretsecret\n-----END RSA PRIVATE KEY-----\n"
    token: abcdef.0123456789abcdef
users:
  - name: ops
    passwd: $6$salt$hash
    lock_passwd: false
        "passwordHash": "$6$x",
        "path": "/etc/kubernetes/pki/ca.key",
          "source": "data:;base64,c2VjcmV0",
        "path": "/etc/kubernetes/pki/ca.crt",
          "source": "data:,-----BEGIN%20EC%20PRIVATE%20KEY-----%0AMHcsecret%0A-----END%20EC%20PRIVATE%20KEY-----%0A",
          "source": "data:,hello",
      -----BEGIN PRIVATE KEY-----
      MIIsecret
      -----END PRIVATE KEY-----
    after`, "\n")
	got := redactLines(in, nil)
	require.Len(t, got, len(in))
	joined := strings.Join(got, "\n")
	for _, s := range []string{"c2Vj", "bW9y", "MII", "MHc", "abcdef.", "$6$", "PRIVATE"} {
		require.NotContains(t, joined, s)
	}
	for _, s := range []string{"lock_passwd: false", `"source": "data:,hello",`, "    after", "-   path: /etc/other", "    encoding: base64"} {
		require.Contains(t, joined, s)
	}
}

// TestDiffHidesSecretFiles: a file whose content comes from a Secret
// (contentFrom) differs from what CABPK stored when that Secret changed;
// diff says where, in cloud-config and in CABPK's Ignition, and never shows
// the content, neither the stored nor the new one.
func TestDiffHidesSecretFiles(t *testing.T) {
	for _, vector := range []string{"cc-join-worker-contentfrom-passwdfrom-v1.34", "ign-init-all-features-v1.35"} {
		t.Run(vector, func(t *testing.T) {
			v := filepath.Join(testenv.VectorsDir(t), vector)
			in, err := os.ReadFile(filepath.Join(v, "input.yaml"))
			require.NoError(t, err)
			old := "app.conf: " + base64.StdEncoding.EncodeToString([]byte("key=value\nother=42\n"))
			require.Contains(t, string(in), old, "the vector's Secret (else this test proves nothing)")
			input := writeTemp(t, strings.Replace(string(in), old, "app.conf: "+base64.StdEncoding.EncodeToString([]byte("password=NEWSECRETVALUE123\n")), 1))
			data, err := os.ReadFile(filepath.Join(v, "bootstrap-data"))
			require.NoError(t, err)
			format, err := os.ReadFile(filepath.Join(v, "format"))
			require.NoError(t, err)
			stored := writeTemp(t, secretYAML(vector, "cluster.x-k8s.io/secret", map[string][]byte{"value": data, "format": format}))
			code, stdout, stderr := runDiff(t, "-f", input, "--against", stored, "--diff")
			require.Equal(t, 1, code, "stdout: %s\nstderr: %s", stdout, stderr)
			require.Contains(t, stdout, "differs: line ")
			for _, s := range []string{"NEWSECRETVALUE123", "key=value", "key%3Dvalue", "other=42", "other%3D42"} {
				require.NotContains(t, stdout+stderr, s, "a Secret's file content is in the output")
			}
		})
	}
}

// TestRedactLinesSecretPaths: a Secret's file is known by its whole path,
// blanks, quotes and JSON escapes included, in YAML and in Ignition JSON.
func TestRedactLinesSecretPaths(t *testing.T) {
	secret := map[string]bool{"/etc/app/db creds.env": true, "/etc/app/café.env": true, "/etc/app/it's.env": true}
	in := strings.Split(`-   path: /etc/app/db creds.env
    content: DB_URL=postgres://u@h/one
-   path: "/etc/app/caf\u00e9.env"
    content: DB_URL=postgres://u@h/two
-   path: '/etc/app/it''s.env'
    content: DB_URL=postgres://u@h/three
-   path: /etc/app/db
    content: shown
        "path": "/etc/app/caf\u00e9.env",
          "source": "data:,DB_URL%3Dpostgres://u@h/four",
        "path": "/etc/app/db creds.env",
          "source": "data:,DB_URL%3Dpostgres://u@h/five",`, "\n")
	out := strings.Join(redactLines(in, secret), "\n")
	for _, s := range []string{"one", "two", "three", "four", "five"} {
		require.NotContains(t, out, "u@h/"+s, "the content of a Secret's file is shown")
	}
	require.Contains(t, out, "content: shown")
}
