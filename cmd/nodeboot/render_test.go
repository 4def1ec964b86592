package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/test/testenv"
)

const cfgRef = "KubeadmConfig default/example-control-plane-0: "

// mutate returns the embedded example with old replaced by new (once; the
// test fails if old is missing, so a changed example cannot hollow a case).
func mutate(t *testing.T, pairs ...string) string {
	t.Helper()
	if len(pairs)%2 != 0 {
		t.Fatalf("mutate: %d strings, want old and new pairs", len(pairs))
	}
	s := string(example)
	for i := 0; i+1 < len(pairs); i += 2 {
		require.Contains(t, s, pairs[i])
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

func TestRenderBadInput(t *testing.T) {
	const file = "  - path: /etc/sysctl.d/90-kubernetes.conf\n"
	tests := []struct {
		name  string
		input func(t *testing.T) string
		want  string
	}{
		// CABPK renders these three; nodeboot warns, and --strict refuses.
		{"relative path (strict)", func(t *testing.T) string { return mutate(t, file, "  - path: etc/sysctl.conf\n") },
			cfgRef + "spec.files[0].path: must be absolute (nodeboot.dev/strict)"},
		{"bad permissions (strict)", func(t *testing.T) string { return mutate(t, `permissions: "0644"`, `permissions: "rw-r--r--"`) },
			cfgRef + "spec.files[0].permissions: must be an octal mode"},
		{"unknown encoding", func(t *testing.T) string { return mutate(t, file, file+"    encoding: zstd\n") },
			cfgRef + "spec.files[0].encoding: Unsupported value"},
		{"content and contentFrom", func(t *testing.T) string {
			return mutate(t, file, file+"    contentFrom:\n      secret: {name: s, key: k}\n")
		}, cfgRef + "spec.files[0]: only one of content or contentFrom"},
		{"contentFrom Secret missing", func(t *testing.T) string {
			return mutate(t, file, "  - path: /etc/extra\n    contentFrom:\n      secret: {name: nope, key: k}\n"+file)
		}, cfgRef + "spec.files[0].contentFrom.secret.name: Secret default/nope not found"},
		{"contentFrom key missing", func(t *testing.T) string {
			return mutate(t, file, "  - path: /etc/extra\n    contentFrom:\n      secret: {name: example-ca, key: nokey}\n"+file)
		}, cfgRef + `spec.files[0].contentFrom.secret.key: Secret default/example-ca has no key "nokey"`},
		{"contentFrom without key", func(t *testing.T) string {
			return mutate(t, file, "  - path: /etc/extra\n    contentFrom:\n      secret: {name: example-ca}\n"+file)
		}, cfgRef + "spec.files[0].contentFrom.secret.key: Required value"},
		{"duplicate path", func(t *testing.T) string {
			return mutate(t, file, "  - path: /etc/sysctl.d/90-kubernetes.conf\n    content: x\n"+file)
		}, cfgRef + "spec.files[1].path: duplicate path"},
		{"empty user name", func(t *testing.T) string { return mutate(t, "  - name: ops\n", "  - name: \"\"\n") },
			cfgRef + "spec.users[0].name: Invalid value: should be at least 1 chars long"},
		{"passwd and passwdFrom", func(t *testing.T) string {
			return mutate(t, "  - name: ops\n", "  - name: ops\n    passwd: x\n    passwdFrom:\n      secret: {name: a, key: b}\n")
		}, cfgRef + "spec.users[0]: only one of passwd or passwdFrom"},
		{"bad template", func(t *testing.T) string {
			return mutate(t, file, "  - path: /etc/t\n    contentFormat: Template\n    content: \"{{ .x \"\n"+file)
		}, cfgRef + "spec.files[0].content: template line 1: cannot be parsed"},
		{"unknown contentFormat", func(t *testing.T) string { return mutate(t, file, file+"    contentFormat: Jinja\n") },
			cfgRef + `spec.files[0].contentFormat: Unsupported value: supported values: "Raw", "Template"`},
		{"bad format", func(t *testing.T) string {
			return mutate(t, "  clusterConfiguration:\n", "  format: xml\n  clusterConfiguration:\n")
		},
			cfgRef + `spec.format: Unsupported value`},
		{"bad Kubernetes version", func(t *testing.T) string { return mutate(t, "version: v1.34.1", "version: latest") },
			"Machine default/example-control-plane-0: spec.version: invalid Kubernetes version \"latest\""},
		{"short mount (strict)", func(t *testing.T) string { return mutate(t, "  ntp:\n", "  mounts:\n  - [/dev/sdb]\n  ntp:\n") },
			cfgRef + "spec.mounts[0]: needs at least a device and a mount point"},
		{"bad table type", func(t *testing.T) string {
			return mutate(t, "  ntp:\n", "  diskSetup:\n    partitions:\n    - {device: /dev/sdb, tableType: dos}\n  ntp:\n")
		}, cfgRef + `spec.diskSetup.partitions[0].tableType: Unsupported value`},
		{"bad corrections annotation", func(t *testing.T) string {
			return mutate(t, "  name: example-control-plane-0\n  namespace: default\n  labels:\n    cluster.x-k8s.io/cluster-name: example\n  ownerReferences:",
				"  name: example-control-plane-0\n  namespace: default\n  annotations:\n    nodeboot.dev/cloud-init-corrections: maybe\n  labels:\n    cluster.x-k8s.io/cluster-name: example\n  ownerReferences:")
		}, cfgRef + "metadata.annotations[nodeboot.dev/cloud-init-corrections]: must be \"true\" or \"false\""},
		{"unknown field", func(t *testing.T) string { return mutate(t, "  preKubeadmCommands:", "  preKubeadmCommand:") },
			`document 3: KubeadmConfig default/example-control-plane-0: unknown field "spec.preKubeadmCommand"`},
		{"wrong type", func(t *testing.T) string { return mutate(t, "  ntp:\n", "  verbosity: loud\n  ntp:\n") },
			"document 3: KubeadmConfig default/example-control-plane-0: "},
		{"negative verbosity", func(t *testing.T) string { return mutate(t, "  ntp:\n", "  verbosity: -1\n  ntp:\n") },
			cfgRef + "spec.verbosity: must not be negative"},
		{"yaml syntax", func(t *testing.T) string { return mutate(t, "  ntp:\n", "  ntp: [\n") }, "document 3: "},
		{"no KubeadmConfig", func(t *testing.T) string { return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n" },
			"the input has no KubeadmConfig"},
		{"no Cluster", func(t *testing.T) string { return mutate(t, "kind: Cluster\n", "kind: NotACluster\n") },
			cfgRef + "Cluster default/example is not in the input"},
		{"missing owner", func(t *testing.T) string { return mutate(t, "kind: Machine\n", "kind: NotAMachine\n") },
			cfgRef + "metadata.ownerReferences: no Machine or MachinePool"},
		{"missing cluster CA", func(t *testing.T) string { return mutate(t, "  name: example-ca\n", "  name: other-ca\n") },
			"Secret default/example-ca: data: not found; the first control-plane node needs the cluster's ca certificate"},
		{"not an object", func(t *testing.T) string { return "just a string\n" }, "document 1: not a Kubernetes object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := []string{"render", "-f", "-"}
			if strings.HasSuffix(tt.name, "(strict)") {
				args = append(args, "--strict")
			}
			code := run(args, strings.NewReader(tt.input(t)), &stdout, &stderr)
			require.Equal(t, 1, code, "stderr: %s", stderr.String())
			require.Empty(t, stdout.String(), "nothing on stdout for invalid input")
			require.Contains(t, stderr.String(), tt.want)
		})
	}
	require.GreaterOrEqual(t, len(tests), 15)
}

func TestRenderExampleDefault(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"render"}, nil, &stdout, &stderr), stderr.String())
	require.True(t, bytes.HasPrefix(stdout.Bytes(), []byte("## template: jinja\n#cloud-config\n")))
	require.Empty(t, stderr.String())
}

// TestRenderVectorsToDir: -o writes exactly what the vectors store.
func TestRenderVectorsToDir(t *testing.T) {
	for _, v := range testenv.Vectors(t, "cc-") {
		t.Run(filepath.Base(v), func(t *testing.T) {
			dir := t.TempDir()
			var stdout, stderr bytes.Buffer
			require.Equal(t, 0, run([]string{"render", "-f", filepath.Join(v, "input.yaml"), "-o", dir}, nil, &stdout, &stderr), stderr.String())
			require.Empty(t, stdout.String())
			for _, name := range []string{"bootstrap-data", "format"} {
				want, err := os.ReadFile(filepath.Join(v, name))
				require.NoError(t, err)
				got, err := os.ReadFile(filepath.Join(dir, name))
				require.NoError(t, err)
				require.Equal(t, string(want), string(got))
				st, err := os.Stat(filepath.Join(dir, name))
				require.NoError(t, err)
				require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "bootstrap data holds private keys")
			}
		})
	}
}

// TestRenderWarnsOnStderrOnly: a hazard is reported on stderr with its field;
// stdout stays CABPK's exact bytes.
func TestRenderWarnsOnStderrOnly(t *testing.T) {
	v := filepath.Join(testenv.VectorsDir(t), "cc-join-worker-template-kcp-v1.33")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"render", "-f", filepath.Join(v, "input.yaml")}, nil, &stdout, &stderr))
	want, err := os.ReadFile(filepath.Join(v, "bootstrap-data"))
	require.NoError(t, err)
	require.Equal(t, string(want), stdout.String())
	require.Contains(t, stderr.String(), "warning: KubeadmConfig default/cc-join-worker-template-kcp-v1.33: spec.files[1].content: ")
}

func TestRenderSizes(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"render", "--sizes"}, nil, &stdout, &stderr))
	require.Contains(t, stderr.String(), "size: total: ")
}

func TestUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 2, run(nil, nil, &stdout, &stderr))
	require.Equal(t, 2, run([]string{"bogus"}, nil, &stdout, &stderr))
	require.Equal(t, 2, run([]string{"render", "--bogus"}, nil, &stdout, &stderr))
}

// TestRenderIgnitionDialects: the CLI renders CABPK's Ignition 2.3 for
// format: ignition, and native Ignition v3 when the annotation asks for it.
func TestRenderIgnitionDialects(t *testing.T) {
	for _, v := range testenv.Vectors(t, "ign-") {
		t.Run(filepath.Base(v), func(t *testing.T) {
			dir := t.TempDir()
			var stdout, stderr bytes.Buffer
			require.Equal(t, 0, run([]string{"render", "-f", filepath.Join(v, "input.yaml"), "-o", dir}, nil, &stdout, &stderr), stderr.String())
			for _, name := range []string{"bootstrap-data", "format"} {
				want, err := os.ReadFile(filepath.Join(v, name))
				require.NoError(t, err)
				got, err := os.ReadFile(filepath.Join(dir, name))
				require.NoError(t, err)
				require.Equal(t, string(want), string(got))
			}
		})
	}
	input, err := os.ReadFile(filepath.Join(testenv.VectorsDir(t), "ign-init-minimal-v1.33", "input.yaml"))
	require.NoError(t, err)
	annotated := strings.Replace(string(input), "kind: KubeadmConfig\nmetadata:\n", "kind: KubeadmConfig\nmetadata:\n  annotations:\n    nodeboot.dev/ignition-version: 3.4.0\n", 1)
	require.NotEqual(t, string(input), annotated)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"render", "-f", "-"}, strings.NewReader(annotated), &stdout, &stderr), stderr.String())
	var cfg struct {
		Ignition struct{ Version string } `json:"ignition"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &cfg))
	require.Equal(t, "3.4.0", cfg.Ignition.Version)
}
