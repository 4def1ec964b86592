package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestValidateVectors: every reference vector validates (warnings allowed,
// printed with their field), and nothing rendered is printed.
func TestValidateVectors(t *testing.T) {
	warned := 0
	for _, v := range append(testenv.Vectors(t, "cc-"), testenv.Vectors(t, "ign-")...) {
		t.Run(filepath.Base(v), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"validate", "-f", filepath.Join(v, "input.yaml")}, nil, &stdout, &stderr)
			require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
			lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			require.Regexp(t, `^valid: 1/1, warnings: \d+$`, lines[len(lines)-1])
			for _, l := range lines[:len(lines)-1] {
				require.True(t, strings.HasPrefix(l, "warning: KubeadmConfig default/"+filepath.Base(v)+": spec."), l)
				warned++
			}
			require.NotContains(t, stdout.String(), "#cloud-config")
			require.NotContains(t, stdout.String(), "PRIVATE KEY")
		})
	}
	require.Positive(t, warned, "some vector carries a hazard CABPK renders")
}

func TestValidateBadInput(t *testing.T) {
	const file = "  - path: /etc/sysctl.d/90-kubernetes.conf\n"
	tests := []struct {
		name   string
		input  string
		strict bool
		want   []string
	}{
		{"relative path (strict)", mutate(t, file, "  - path: etc/sysctl.conf\n"), true,
			[]string{cfgRef + "spec.files[0].path: must be absolute (nodeboot.dev/strict)"}},
		{"content and contentFrom", mutate(t, file, file+"    contentFrom:\n      secret: {name: s, key: k}\n"), false,
			[]string{cfgRef + "spec.files[0]: Invalid value: only one of content or contentFrom may be specified for a single file (webhook)",
				cfgRef + "spec.files[0]: only one of content or contentFrom"}},
		{"duplicate path", mutate(t, file, "  - path: /etc/sysctl.d/90-kubernetes.conf\n    content: x\n"+file), false,
			[]string{cfgRef + "spec.files[1].path: Invalid value: path property must be unique among all files (webhook)", cfgRef + "spec.files[1].path: duplicate path"}},
		{"missing Cluster", mutate(t, "kind: Cluster\n", "kind: NotACluster\n"), false,
			[]string{cfgRef + "Cluster default/example is not in the input"}},
		{"no such name", string(example), false, []string{`no KubeadmConfig named "nope" in the input`}},
		{"not an object", "just a string\n", false, []string{"document 1: not a Kubernetes object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"validate", "-f", "-"}
			if tt.strict {
				args = append(args, "--strict")
			}
			if tt.name == "no such name" {
				args = append(args, "--name", "nope")
			}
			var stdout, stderr bytes.Buffer
			require.Equal(t, 1, run(args, strings.NewReader(tt.input), &stdout, &stderr), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
			for _, w := range tt.want {
				require.Contains(t, stdout.String(), w)
			}
			require.NotContains(t, stdout.String(), "#cloud-config")
		})
	}
}

// TestValidateStrictWarnings: a hazard is a warning (exit 0) without
// --strict, an error (exit 1) with it.
func TestValidateStrictWarnings(t *testing.T) {
	in := filepath.Join(testenv.VectorsDir(t), "cc-join-worker-template-kcp-v1.33", "input.yaml")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"validate", "-f", in}, nil, &stdout, &stderr), stdout.String())
	require.Contains(t, stdout.String(), "warning: KubeadmConfig default/cc-join-worker-template-kcp-v1.33: spec.files[1].content: ")
	stdout.Reset()
	require.Equal(t, 1, run([]string{"validate", "-f", in, "--strict"}, nil, &stdout, &stderr))
	require.Contains(t, stdout.String(), "KubeadmConfig default/cc-join-worker-template-kcp-v1.33: spec.files[1].content: ")
	require.Contains(t, stdout.String(), "(nodeboot.dev/strict)")
	require.Contains(t, stdout.String(), "valid: 0/1")
}

// TestValidateSeveralConfigs: every config of a file is validated, each
// named; --name picks one.
func TestValidateSeveralConfigs(t *testing.T) {
	dir := testenv.VectorsDir(t)
	var input strings.Builder
	for _, n := range []string{"cc-join-worker-minimal-v1.33", "ign-join-worker-minimal-v1.33"} {
		in, err := os.ReadFile(filepath.Join(dir, n, "input.yaml"))
		require.NoError(t, err)
		input.WriteString("---\n" + string(in))
	}
	bad := input.String()
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"validate", "-f", "-"}, strings.NewReader(bad), &stdout, &stderr), stdout.String())
	require.Contains(t, stdout.String(), "valid: 2/2")
	stdout.Reset()
	require.Equal(t, 0, run([]string{"validate", "-f", "-", "--name", "ign-join-worker-minimal-v1.33"}, strings.NewReader(bad), &stdout, &stderr), stdout.String())
	require.Contains(t, stdout.String(), "valid: 1/1")
	// The webhook refuses Ignition when its feature gate is off.
	stdout.Reset()
	require.Equal(t, 1, run([]string{"validate", "-f", "-", "--feature-gates", "KubeadmBootstrapFormatIgnition=false"}, strings.NewReader(bad), &stdout, &stderr), stdout.String())
	require.Contains(t, stdout.String(), "KubeadmConfig default/ign-join-worker-minimal-v1.33: spec.format: Forbidden: ")
	require.Contains(t, stdout.String(), "valid: 1/2")
	require.Equal(t, 2, run([]string{"validate", "--feature-gates", "NoSuchGate=true"}, nil, &stdout, &stderr))
	stdout.Reset()
	require.Equal(t, 0, run([]string{"validate", "--feature-gates", defaultFeatureGates}, nil, &stdout, &stderr), stdout.String()+stderr.String())
}
