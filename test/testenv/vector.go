package testenv

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/bootstrap/manifest"
)

// VectorInput reads a reference vector's input.yaml into a bootstrap.Input.
func VectorInput(t testing.TB, dir string) *bootstrap.Input {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := manifest.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	in, err := set.Input("")
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return in
}

// BuildVector builds a reference vector's Plan as CABPK would decide it.
func BuildVector(t testing.TB, dir string) *bootstrap.Result {
	t.Helper()
	res, err := bootstrap.Build(context.Background(), *VectorInput(t, dir))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return res
}
