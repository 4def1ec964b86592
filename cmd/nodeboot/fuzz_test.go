package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// FuzzRender feeds arbitrary input through the whole CLI pipeline: parse,
// build, render. Any input may be rejected; none may panic.
func FuzzRender(f *testing.F) {
	f.Add(example)
	for _, v := range testenv.Vectors(f, "cc-") {
		if data, err := os.ReadFile(filepath.Join(v, "input.yaml")); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("kind: KubeadmConfig\nspec: {files: [{path: a}]}\n"))
	f.Fuzz(func(t *testing.T, input []byte) {
		_, _, _ = renderBytes(input, renderFlags{sizes: true, inputFlags: inputFlags{addons: addonsctrl.ExtensionOptions{MaxBytes: 16384, Compress: true}}}, io.Discard)
	})
}
