package ignition

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	// The render path takes Butane only with its translator linked, as
	// the manager and the CLI link it.
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/butane"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// butaneConfig adds a file, a unit and a user, and replaces the generated
// sudoers rule of the vector's user "capi".
const butaneConfig = `variant: flatcar
version: 1.1.0
storage:
  files:
  - path: /etc/from-butane.conf
    mode: 0640
    contents:
      inline: from butane
  - path: /etc/sudoers.d/capi
    overwrite: true
    mode: 0440
    contents:
      inline: "capi ALL=(ALL) ALL\n"
systemd:
  units:
  - name: butane-hello.service
    enabled: true
    contents: |
      [Service]
      Type=oneshot
      ExecStart=/usr/bin/true
      [Install]
      WantedBy=multi-user.target
passwd:
  users:
  - name: butane
    ssh_authorized_keys:
    - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIButane butane@example
`

func TestButaneAdditionalConfigApplied(t *testing.T) {
	dir := filepath.Join(testenv.VectorsDir(t), "ign-init-all-features-v1.35")
	res := buildWith(t, dir, "3.4.0", func(c *bootstrapv1.KubeadmConfig) {
		v3Buildable(c)
		c.Spec.Ignition.ContainerLinuxConfig.AdditionalConfig = butaneConfig
		c.Spec.Ignition.ContainerLinuxConfig.Strict = ptrTrue()
	})
	out, err := res.Render()
	require.NoError(t, err)
	require.Empty(t, out.Warnings)
	root := apply(t, out.Data)

	got, err := os.ReadFile(filepath.Join(root, "etc/from-butane.conf"))
	require.NoError(t, err)
	require.Equal(t, "from butane", string(got))
	st, err := os.Stat(filepath.Join(root, "etc/from-butane.conf"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), st.Mode().Perm())
	_, err = os.Stat(filepath.Join(root, "etc/systemd/system/butane-hello.service"))
	require.NoError(t, err)
	require.Contains(t, accounts(t, filepath.Join(root, "etc/passwd")), "butane")
	keys, err := os.ReadFile(filepath.Join(root, "home/butane/.ssh/authorized_keys.d/ignition"))
	require.NoError(t, err)
	require.Equal(t, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIButane butane@example\n", string(keys))
	// The user's file wins over the generated sudoers rule.
	rule, err := os.ReadFile(filepath.Join(root, "etc/sudoers.d/capi"))
	require.NoError(t, err)
	require.Equal(t, "capi ALL=(ALL) ALL\n", string(rule))
	// And the generated rest is still there.
	_, err = os.Stat(filepath.Join(root, "etc/nodeboot/bootstrap.sh"))
	require.NoError(t, err)
}

func ptrTrue() *bool { b := true; return &b }
