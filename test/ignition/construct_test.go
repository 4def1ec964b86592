package ignition

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// hostileContents are file contents that exercise the data: URL encoding of
// generated files: every byte value, escapes, Unicode and YAML syntax.
var hostileContents = func() []string {
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
	}
	return []string{all.String(), "%00%zz#?[]{}|\\^`\"<>", "ünï\u2028cödé\r\n", "a: b #c\n- d\n", "{{ .x }}\n"}
}()

// TestV3GeneratedPassesIgnitionValidate: native Ignition skips Ignition's
// own validation of what it generates (validated by construction), so every
// vector, in every native version, as it is and with files of hostile
// contents, is rendered and checked by upstream ignition-validate pinned to
// that version, in one call per version.
func TestV3GeneratedPassesIgnitionValidate(t *testing.T) {
	tool := testenv.Tool(t, "ignition-validate")
	for _, version := range ignition.Versions[1:] {
		t.Run(version, func(t *testing.T) {
			dir := t.TempDir()
			var files []string
			for _, vdir := range allVectors(t) {
				for variant := range 2 {
					res := buildWith(t, vdir, version, func(c *bootstrapv1.KubeadmConfig) {
						v3Buildable(c)
						if variant == 1 {
							for i, s := range hostileContents {
								c.Spec.Files = append(c.Spec.Files, bootstrapv1.File{Path: fmt.Sprintf("/etc/hostile/%d", i), Permissions: "0600", Content: s})
							}
						}
					})
					out, err := res.Render()
					require.NoError(t, err, vdir)
					file := filepath.Join(dir, fmt.Sprintf("%s-%d.ign", filepath.Base(vdir), variant))
					require.NoError(t, os.WriteFile(file, out.Data, 0o600))
					files = append(files, file)
				}
			}
			out, err := exec.Command(tool, append([]string{"--spec", version}, files...)...).CombinedOutput()
			require.NoError(t, err, "ignition-validate:\n%s", out)
			valid := strings.Count("\n"+string(out), "\nOK ")
			require.Equal(t, len(files), valid, "ignition-validate:\n%s", out)
		})
	}
}
