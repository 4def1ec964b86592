package ignition

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
)

// TestV3SamePathAppliedInOrder: Plan files that share a path (a file and
// appends to it, or appends only) leave what writing them in order leaves, through the real Ignition engine. Ignition refuses
// two entries for one path ("duplicate entry defined"), which Render hit
// while Validate and Capabilities accepted the Plan.
func TestV3SamePathAppliedInOrder(t *testing.T) {
	plan := &provisioning.Plan{Files: []provisioning.File{
		{Path: "/etc/demo/joined", Permissions: "0600", Content: "first\n"},
		{Path: "/etc/demo/joined", Content: "second\n", Append: yes()},
		{Path: "/etc/demo/appended", Content: "one\n", Append: yes()},
		{Path: "/etc/demo/appended", Permissions: "0640", Content: "two\n", Append: yes()},
		{Path: "/etc/demo/three", Content: "a\n"},
		{Path: "/etc/demo/three", Content: "b\n", Append: yes()},
		{Path: "/etc/demo/three", Permissions: "0755", Content: "c\n", Append: yes()},
	}}
	prov, err := provisioning.Get(ignition.Format)
	require.NoError(t, err)
	out, err := prov.Render(plan, provisioning.Options{Version: "3.4.0"})
	require.NoError(t, err)
	root := apply(t, out.Data)
	for path, want := range map[string]struct {
		content string
		mode    os.FileMode
	}{
		"etc/demo/joined":   {"first\nsecond\n", 0o600},
		"etc/demo/appended": {"one\ntwo\n", 0o640},
		"etc/demo/three":    {"a\nb\nc\n", 0o755},
	} {
		b, err := os.ReadFile(filepath.Join(root, path))
		require.NoError(t, err)
		require.Equal(t, want.content, string(b), path)
		st, err := os.Stat(filepath.Join(root, path))
		require.NoError(t, err)
		require.Equal(t, want.mode, st.Mode().Perm(), path)
	}
}
