package crdvalidate

import "testing"

// BenchmarkLoad is what the first validation costs a process (`nodeboot
// render` pays it once, lazily): decompressing the schema, converting it
// schema and compiling its CEL rules. BenchmarkValidate is each object after.
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := load("KubeadmConfig"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	v, err := For("KubeadmConfig")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		obj := map[string]any{"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfig",
			"metadata": map[string]any{"name": "x"},
			"spec": map[string]any{"format": "cloud-config", "files": []any{map[string]any{"path": "/etc/x", "content": "y"}},
				"users": []any{map[string]any{"name": "ops"}}, "postKubeadmCommands": []any{"echo"}}}
		if errs := v.Validate(obj); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
