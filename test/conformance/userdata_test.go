package conformance

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning/conformance"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestPlainPartsValidate: cloud-init's schema check reads one
// cloud-config, not multi-part MIME, so each part of the plain dialect's
// MIME user data is checked on its own: split by Go's MIME reader (not
// ours), every cloud-config and jinja part through cloudinit-validate
// --strict (jinja rendered by cloud-init against instance data with the
// case's metadata), every script part by sh -n. TestConformance applies
// the same outputs whole with cloudinit-apply.
func TestPlainPartsValidate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not running cloud-init")
	}
	testenv.RequireRoot(t)
	tool := testenv.Tool(t, "cloudinit-validate")
	dir := t.TempDir()
	instance := filepath.Join(dir, "instance-data.json")
	require.NoError(t, os.WriteFile(instance, []byte(`{"ds": {"meta_data": {"local_hostname": "node-7", "local-hostname": "node-7",
 "local_ipv4": "192.0.2.77", "local-ipv4": "192.0.2.77", "instance_id": "i-0c0nf0rmance7", "instance-id": "i-0c0nf0rmance7"}},
 "v1": {"local_hostname": "node-7", "instance_id": "i-0c0nf0rmance7", "cloud_name": "nocloud", "platform": "nocloud",
 "distro": "debian", "region": null, "availability_zone": null}, "merged_cfg": {}}`), 0o600))
	p, err := provisioning.Get(cloudinit.Format)
	require.NoError(t, err)
	var configs []string
	for _, c := range conformance.Cases() {
		plan := c.Plan()
		if len(plan.UserData) == 0 && !plan.UsesNodeValues() {
			continue
		}
		out, err := p.Render(plan, provisioning.Options{})
		if len(plan.UserData) > 0 && plan.UserData[0].Type == provisioning.UserDataIgnition {
			require.ErrorIs(t, err, provisioning.ErrUnsupported, c.Name)
			continue
		}
		require.NoError(t, err, c.Name)
		parts := mimeParts(t, out.Data)
		if len(plan.UserData) == 0 {
			require.Empty(t, parts, "%s: without user data the output is one document", c.Name)
			parts = map[string][]byte{"document": out.Data}
		} else {
			require.Len(t, parts, 1+len(plan.UserData), c.Name)
		}
		for name, body := range parts {
			f := filepath.Join(dir, c.Name+"-"+name)
			require.NoError(t, os.WriteFile(f, body, 0o600))
			if bytes.HasPrefix(body, []byte("#!")) {
				out, err := exec.Command("sh", "-n", f).CombinedOutput()
				require.NoError(t, err, "%s: %s", f, out)
				continue
			}
			configs = append(configs, f)
		}
	}
	require.NotEmpty(t, configs)
	cmd := exec.Command(tool, append([]string{"--strict"}, configs...)...)
	cmd.Env = append(os.Environ(), "CI_INSTANCE_DATA="+instance)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "cloudinit-validate:\n%s", out)
	t.Logf("%s", out)
}

// mimeParts splits multi-part MIME user data into its parts by file name;
// nil when data is not multi-part.
func mimeParts(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	header, body, ok := bytes.Cut(data, []byte("\n\n"))
	if !ok || !bytes.HasPrefix(header, []byte("Content-Type: multipart/mixed")) {
		return nil
	}
	line, _, _ := strings.Cut(string(header), "\n")
	_, params, err := mime.ParseMediaType(strings.TrimPrefix(line, "Content-Type: "))
	require.NoError(t, err)
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	out := map[string][]byte{}
	for {
		part, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		b, err := io.ReadAll(part)
		require.NoError(t, err)
		out[part.FileName()] = b
	}
}
