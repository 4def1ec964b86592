package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// BenchmarkDocuments prices the reader's checks (encoding, markers,
// duplicate keys, alias and node budgets) against what it replaced,
// apimachinery's YAMLReader plus the TypeMeta decode every document got, on
// the reference vectors' inputs, in the same run.
func BenchmarkDocuments(b *testing.B) {
	paths, _ := filepath.Glob("/work/shared/cabpk-vectors/*/input.yaml")
	if len(paths) == 0 {
		b.Fatal("no reference vectors in /work/shared/cabpk-vectors")
	}
	var all [][]byte
	size := 0
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, raw)
		size += len(raw)
	}
	b.Run("nodeboot", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, raw := range all {
				if err := Documents(bytes.NewReader(raw), func([]byte) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("apimachinery", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, raw := range all {
				r := utilyaml.NewYAMLReader(bufio.NewReaderSize(bytes.NewReader(raw), 64<<10))
				for {
					doc, err := r.Read()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					var tm TypeMeta
					if err := yaml.Unmarshal(doc, &tm); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	})
	b.Run("Parse", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, raw := range all {
				if _, err := Parse(bytes.NewReader(raw)); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
