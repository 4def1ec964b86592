package addons

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScriptEmbedded checks the embedded step is the file in the package
// without its comment lines (and nothing else), that the file has no
// here-document whose lines stripping could change, and that both are valid
// POSIX shell (dash -n where available, else sh -n).
func TestScriptEmbedded(t *testing.T) {
	raw, err := os.ReadFile("apply.sh")
	require.NoError(t, err)
	require.NotContains(t, string(raw), "<<")
	var kept []string
	for i, line := range strings.Split(string(raw), "\n") {
		if i == 0 || !strings.HasPrefix(strings.TrimSpace(line), "#") {
			kept = append(kept, line)
		}
	}
	require.Equal(t, strings.Join(kept, "\n"), Script())
	require.Less(t, len(Script()), len(raw))
	require.True(t, strings.HasPrefix(Script(), "#!/bin/sh\n"))
	shell := "sh"
	if p, err := exec.LookPath("dash"); err == nil {
		shell = p
	}
	out, err := exec.Command(shell, "-n", "apply.sh").CombinedOutput()
	require.NoError(t, err, string(out))
	stripped := filepath.Join(t.TempDir(), "apply.sh")
	require.NoError(t, os.WriteFile(stripped, []byte(Script()), 0o600))
	out, err = exec.Command(shell, "-n", stripped).CombinedOutput()
	require.NoError(t, err, string(out))
	for _, want := range []string{"--server-side", "--field-manager=nodeboot", "nodeboot-addons", "kube-system", "/etc/kubernetes/admin.conf"} {
		require.Contains(t, Script(), want)
	}
}
