package crdvalidate_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodeboot/nodeboot/internal/crdvalidate"
)

var update = flag.Bool("update", false, "rewrite the embedded schemas from the pinned Cluster API module")

// TestEmbeddedSchemasArePinned: the embedded schemas are the pinned Cluster
// API module's CRDs' v1beta2 schemas (regenerate with `make
// crdvalidate-crds`, which runs this test with -update).
func TestEmbeddedSchemasArePinned(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-api").Output()
	if err != nil {
		t.Fatalf("locating the cluster-api module: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "bootstrap", "kubeadm", "config", "crd", "bases")
	for kind, name := range crdvalidate.Files {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := crdvalidate.SchemaFromCRD(raw)
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			js, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			_, _ = zw.Write(js)
			_ = zw.Close()
			if err := os.WriteFile(crdvalidate.EmbeddedName(name), buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue // the binary embeds the old files; the next run compares
		}
		got, err := crdvalidate.Schema(kind)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: embedded schema differs from the module's %s (-module +embedded):\n%.2000s", kind, name, diff)
		}
	}
}

// TestRefusesWhatTheAPIServerRefuses: cases whose outcome comes from the CRD
// (its Enum, MinLength and CEL rules), with messages that name the field and
// never repeat the value.
func TestRefusesWhatTheAPIServerRefuses(t *testing.T) {
	const secret = "s3cr3t-value-XYZ"
	tests := []struct {
		name string
		spec map[string]any
		want string // "" = valid
	}{
		{"valid", map[string]any{"format": "cloud-config"}, ""},
		{"empty spec (minProperties)", map[string]any{}, "spec: Invalid value: should have at least 1 properties"},
		{"format enum", map[string]any{"format": secret}, "spec.format: Unsupported value"},
		{"empty user name", map[string]any{"users": []any{map[string]any{"name": ""}}}, "spec.users[0].name: Invalid value"},
		{"wrong type", map[string]any{"verbosity": secret}, "spec.verbosity: Invalid value"},
		{"layout and diskLayout (CEL)", map[string]any{"diskSetup": map[string]any{"partitions": []any{map[string]any{"device": "/dev/sdb"}}}}, "exactly one of the fields in [layout diskLayout] must be set"},
	}
	v, err := crdvalidate.For("KubeadmConfig")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := map[string]any{"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfig",
				"metadata": map[string]any{"name": "x", "namespace": "default"}, "spec": tt.spec}
			msg := crdvalidate.Compact(v.Validate(obj))
			switch {
			case tt.want == "" && msg != "":
				t.Fatalf("refused: %s", msg)
			case tt.want != "" && !strings.Contains(msg, tt.want):
				t.Fatalf("got %q, want it to contain %q", msg, tt.want)
			case strings.Contains(msg, secret):
				t.Fatalf("message repeats the value: %s", msg)
			}
		})
	}
	if _, err := crdvalidate.For("Machine"); err == nil {
		t.Fatal("a kind without an embedded CRD must be an error")
	}
}
