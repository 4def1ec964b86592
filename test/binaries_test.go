package test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestBinariesLinkEveryDialect: the manager and the CLI render both
// Ignition dialects and take Butane additional config, which each of those
// packages registers from its init when imported (ignition.RegisterDialect,
// ignition.RegisterButane). Without the blank import in main.go the program
// still builds, and CABPK's Ignition becomes ErrUnknownVersion and Butane
// ErrButaneNotLinked: this catches a dropped import before a cluster does.
func TestBinariesLinkEveryDialect(t *testing.T) {
	for _, cmd := range []string{"./cmd/manager", "./cmd/nodeboot"} {
		c := exec.Command("go", "list", "-deps", cmd)
		c.Dir = testenv.ModuleRoot()
		out, err := c.Output()
		require.NoError(t, err, cmd)
		deps := map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			deps[d] = true
		}
		for _, pkg := range []string{"/ignition/legacy", "/ignition/v3", "/ignition/butane", "/cloudinit"} {
			require.True(t, deps[library+pkg], "%s does not link %s", cmd, library+pkg)
		}
	}
}
