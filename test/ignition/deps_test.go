package ignition

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/internal/testenv"
)

// TestIgnitionImports enforces DESIGN.md: the renderer knows provisioning and
// the Ignition libraries only; CABPK's renderers and reconcilers are test
// oracles, never dependencies.
func TestIgnitionImports(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./ignition")
	cmd.Dir = testenv.ModuleRoot()
	out, err := cmd.Output()
	require.NoError(t, err)
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{
			"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit",
			"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/ignition",
			"sigs.k8s.io/cluster-api/bootstrap/kubeadm/reconcilers",
			"github.com/nodeboot/nodeboot/bootstrap",
			"github.com/nodeboot/nodeboot/controllers",
			"github.com/nodeboot/nodeboot/cloudinit",
		} {
			require.False(t, strings.HasPrefix(dep, banned), "ignition depends on %s", dep)
		}
	}
}
