// Package examples runs the repository's example programs, which are Go
// modules of their own: `go test ./...` at the root does not enter a
// nested module, so without this test `make test` would never build them.
package examples

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestK3sExample runs the k3s example module's tests: it builds and runs
// the example, validates its outputs with cloud-init's schema and Ignition's
// validator, runs its scripts in a chroot and boots its cloud-config with
// cloudinit-apply (about 20-40 s; -short runs only the tool-free tests).
func TestK3sExample(t *testing.T) {
	args := []string{"test", "-count=1"}
	if testing.Short() {
		args = append(args, "-short")
	}
	if testing.Verbose() {
		args = append(args, "-v")
	}
	cmd := exec.Command("go", append(args, "./...")...)
	cmd.Dir = filepath.Join(testenv.ModuleRoot(), "examples", "k3s")
	// The example is its own module with a replace to this tree: no
	// workspace, and go.sum entries completed if this tree's go.mod moved.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false", "NODEBOOT_SHARED="+testenv.SharedDir(t))
	out, err := cmd.CombinedOutput()
	t.Logf("go %v in examples/k3s:\n%s", args, out)
	if err != nil {
		t.Fatalf("the k3s example's tests failed: %v", err)
	}
}
