package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/test/testenv"
)

const addonDocs = `---
apiVersion: addons.nodeboot.dev/v1alpha1
kind: FirstBootAddon
metadata:
  name: cni
  namespace: default
spec:
  clusterSelector:
    matchLabels:
      cni: flannel
  builtin:
    name: flannel
---
apiVersion: addons.nodeboot.dev/v1alpha1
kind: FirstBootAddon
metadata:
  name: dns
  namespace: default
spec:
  order: 10
  clusterSelector:
    matchLabels:
      cni: flannel
  builtin:
    name: nodelocaldns
`

// addonInput is an init vector with its Cluster labelled for addonDocs, the
// Cluster's annotations (if any) and the FirstBootAddons appended.
func addonInput(t *testing.T, vector string, clusterAnnotations string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.VectorsDir(t), vector, "input.yaml"))
	require.NoError(t, err)
	const head = "kind: Cluster\nmetadata:\n"
	require.True(t, strings.Contains(string(raw), head))
	meta := head + "  labels:\n    cni: flannel\n" + clusterAnnotations
	return strings.Replace(string(raw), head, meta, 1) + addonDocs
}

// TestRenderAddons: FirstBootAddons in the input are applied to the selected
// Cluster as the controller applies them: the init node gets the add-on files
// and apply step, gzip-compressed within the 16 KiB budget, and --sizes
// reports each part.
func TestRenderAddons(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"render", "-f", "-", "--sizes"}, strings.NewReader(addonInput(t, "cc-init-minimal-v1.33", "")), &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	require.True(t, bytes.HasPrefix(stdout.Bytes(), []byte{0x1f, 0x8b}), "compressed as --addons-compress defaults to")
	require.LessOrEqual(t, stdout.Len(), 16384)
	zr, err := gzip.NewReader(&stdout)
	require.NoError(t, err)
	data, err := io.ReadAll(zr)
	require.NoError(t, err)
	for _, want := range []string{"/etc/kubernetes/addons/000-cni.yaml", "/etc/kubernetes/addons/010-dns.yaml", "/etc/kubernetes/addons/apply.sh", "kube-flannel"} {
		require.Contains(t, string(data), want)
	}
	for _, want := range []string{"size: total: ", "size: uncompressed: ", "size: write_files: "} {
		require.Contains(t, stderr.String(), want)
	}
	t.Logf("%s", stderr.String())

	// Without compression the same node is over the budget: an error, no data.
	stdout.Reset()
	stderr.Reset()
	code = run([]string{"render", "-f", "-", "--addons-compress=false"}, strings.NewReader(addonInput(t, "cc-init-minimal-v1.33", "")), &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Empty(t, stdout.String())
	require.Contains(t, stderr.String(), "budget 16384")

	// The Cluster's budget annotation overrides the flag.
	stdout.Reset()
	stderr.Reset()
	big := "  annotations:\n    nodeboot.dev/bootstrap-data-max-bytes: \"65536\"\n"
	code = run([]string{"render", "-f", "-", "--addons-compress=false"}, strings.NewReader(addonInput(t, "cc-init-minimal-v1.33", big)), &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	require.Greater(t, stdout.Len(), 16384)
	require.True(t, bytes.HasPrefix(stdout.Bytes(), []byte("## template: jinja\n#cloud-config\n")))
}

// TestRenderAddonsIgnition: Ignition v3 with add-ons, gzip-wrapped.
func TestRenderAddonsIgnition(t *testing.T) {
	input := addonInput(t, "ign-init-minimal-v1.33", "")
	input = strings.Replace(input, "kind: KubeadmConfig\nmetadata:\n", "kind: KubeadmConfig\nmetadata:\n  annotations:\n    nodeboot.dev/ignition-version: 3.4.0\n", 1)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"render", "-f", "-", "--sizes"}, strings.NewReader(input), &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), `"replace":{"compression":"gzip","source":"data:;base64,`)
	require.LessOrEqual(t, stdout.Len(), 16384)
	require.Contains(t, stderr.String(), "size: uncompressed: ")
}

// TestRenderAddonsUnselectedOrInvalid: add-ons that select no Cluster leave
// CABPK's bytes alone; an invalid FirstBootAddon or budget annotation is an
// error naming the object and field, never the value.
func TestRenderAddonsUnselectedOrInvalid(t *testing.T) {
	v := filepath.Join(testenv.VectorsDir(t), "cc-init-minimal-v1.33")
	raw, err := os.ReadFile(filepath.Join(v, "input.yaml"))
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(v, "bootstrap-data"))
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"render", "-f", "-"}, strings.NewReader(string(raw)+addonDocs), &stdout, &stderr), stderr.String())
	require.Equal(t, string(want), stdout.String())

	for name, tc := range map[string]struct{ input, want string }{
		"unknown field": {addonInput(t, "cc-init-minimal-v1.33", "") + "---\napiVersion: addons.nodeboot.dev/v1alpha1\nkind: FirstBootAddon\nmetadata: {name: bad}\nspec: {bogus: 1}\n",
			"FirstBootAddon /bad: "},
		"bad builtin": {strings.Replace(addonInput(t, "cc-init-minimal-v1.33", ""), "name: nodelocaldns", "name: weave", 1),
			"FirstBootAddon default/dns: spec.builtin.name"},
		"bad budget": {addonInput(t, "cc-init-minimal-v1.33", "  annotations:\n    nodeboot.dev/bootstrap-data-max-bytes: lots\n"),
			"Cluster default/test-cluster: metadata.annotations[nodeboot.dev/bootstrap-data-max-bytes]: must be a whole number of bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.Equal(t, 1, run([]string{"render", "-f", "-"}, strings.NewReader(tc.input), &stdout, &stderr))
			require.Empty(t, stdout.String())
			require.Contains(t, stderr.String(), tc.want)
			require.NotContains(t, stderr.String(), "lots")
		})
	}
}
