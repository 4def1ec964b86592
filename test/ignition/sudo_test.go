package ignition

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
)

// TestV3SudoRulesHonoured applies users whose names sudo's @includedir
// would skip as file names ("jane.doe" has a dot, "ops~" ends in '~') and
// one whose sanitised name they could collide with ("jane_doe"), then asks
// the real sudo (sudo -l -U, with the applied root's accounts and
// sudoers.d mounted over the host's in a private mount namespace) what
// each user may run.
func TestV3SudoRulesHonoured(t *testing.T) {
	sudo, err := exec.LookPath("sudo")
	if err != nil {
		t.Fatalf("sudo is needed (apt-get install sudo): %v", err)
	}
	rules := map[string]string{
		"jane.doe": "ALL=(ALL) NOPASSWD: /usr/bin/id",
		"jane_doe": "ALL=(ALL) NOPASSWD: /usr/bin/true",
		"ops~":     "ALL=(ALL) NOPASSWD: /usr/bin/false",
		"core":     "ALL=(ALL) NOPASSWD: ALL",
	}
	plan := &provisioning.Plan{}
	for _, name := range []string{"jane.doe", "jane_doe", "ops~", "core"} {
		plan.Users = append(plan.Users, provisioning.User{Name: name, Sudo: rules[name]})
	}
	out, err := (&ignition.Renderer{}).Render(plan, provisioning.Options{Version: "3.4.0"})
	require.NoError(t, err)
	root := apply(t, out.Data)
	for name, rule := range rules {
		script := `set -e
for f in passwd group shadow; do mount --bind "$1/etc/$f" "/etc/$f"; done
mount --bind "$1/etc/sudoers.d" /etc/sudoers.d
exec "$2" -l -U "$3"`
		got, err := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", root, sudo, name).CombinedOutput()
		require.NoError(t, err, "sudo -l -U %s:\n%s", name, got)
		_, cmd, _ := strings.Cut(rule, "NOPASSWD: ")
		require.Contains(t, string(got), "NOPASSWD: "+cmd, "sudo -l -U %s honours the rule:\n%s", name, got)
		require.NotContains(t, string(got), "is not allowed", name)
	}
	entries, err := os.ReadDir(filepath.Join(root, "etc/sudoers.d"))
	require.NoError(t, err)
	require.Len(t, entries, len(rules), "one file per user")
}
