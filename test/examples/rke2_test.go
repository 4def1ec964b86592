package examples

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestRKE2Example runs the RKE2 example module's tests: its godoc example,
// the command and the import rule. Its Plans go through every format with
// the real tools in test/conformance (TestExamplesConformance).
func TestRKE2Example(t *testing.T) {
	args := []string{"test", "-count=1"}
	if testing.Verbose() {
		args = append(args, "-v")
	}
	cmd := exec.Command("go", append(args, "./...")...)
	cmd.Dir = filepath.Join(testenv.ModuleRoot(), "examples", "rke2")
	// Its own module with a replace to this tree, as examples/k3s.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false")
	out, err := cmd.CombinedOutput()
	t.Logf("go %v in examples/rke2:\n%s", args, out)
	if err != nil {
		t.Fatalf("the rke2 example's tests failed: %v", err)
	}
}
