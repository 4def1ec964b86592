package addons

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScriptEmbedded checks the embedded step is the file in the package and
// is valid POSIX shell (dash -n where available, else sh -n).
func TestScriptEmbedded(t *testing.T) {
	raw, err := os.ReadFile("apply.sh")
	require.NoError(t, err)
	require.Equal(t, string(raw), Script())
	require.True(t, strings.HasPrefix(Script(), "#!/bin/sh\n"))
	shell := "sh"
	if p, err := exec.LookPath("dash"); err == nil {
		shell = p
	}
	out, err := exec.Command(shell, "-n", "apply.sh").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, want := range []string{"--server-side", "--field-manager=nodeboot", "nodeboot-addons", "kube-system", "/etc/kubernetes/admin.conf"} {
		require.Contains(t, Script(), want)
	}
}
