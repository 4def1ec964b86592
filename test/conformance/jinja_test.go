package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestPlainJinjaIsData renders per-node values whose literal text is made
// of what jinja, YAML and the shell read as syntax, and whose values are
// too, through cloud-init's own jinja renderer (`cloud-init devel render`,
// the code a first boot runs), then reads the result as YAML: every file
// must hold exactly its literal text and values, and each runcmd export
// must give the shell exactly the value.
func TestPlainJinjaIsData(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not running cloud-init")
	}
	testenv.RequireRoot(t)
	testenv.Tool(t, "cloudinit-validate") // installs Debian's cloud-init when missing
	const (
		name = `node "7" \ it's`
		ip   = `192.0.2.77 {{ x }}`
		id   = "i-0abc{%"
	)
	literals := []string{
		"{{ ds.meta_data.local_hostname }}", "{%- raw %}{% endraw %}", "{# c #}", "{{{", "{", "}}", "\"quoted\" \\n \\\\ 'single'",
		"line\nbreaks\n  indented\n", "ünïcödé ✓", "- [yaml, list]: {flow: map}", "$(touch /tmp/pwned) `id` ${HOME}",
	}
	var text provisioning.Text
	want := ""
	values := map[provisioning.NodeValue]string{provisioning.NodeName: name, provisioning.NodeLocalIPv4: ip, provisioning.NodeInstanceID: id}
	for i, l := range literals {
		v := provisioning.NodeValues[i%len(provisioning.NodeValues)]
		text = append(text, provisioning.Literal(l), provisioning.Value(v))
		want += l + values[v]
	}
	plan := &provisioning.Plan{
		Files: []provisioning.File{
			{Path: "/etc/mixed", Template: text},
			{Path: "/etc/value-only", Template: provisioning.Text{provisioning.Value(provisioning.NodeName)}},
			{Path: "/etc/untemplated", Content: "{{ untouched }} {% if %}\n"},
		},
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Template: provisioning.Text{provisioning.Literal("echo "), provisioning.Value(provisioning.NodeName)}}},
	}
	p, err := provisioning.Get(cloudinit.Format)
	require.NoError(t, err)
	out, err := p.Render(plan, provisioning.Options{})
	require.NoError(t, err)

	dir := t.TempDir()
	ud := filepath.Join(dir, "user-data")
	require.NoError(t, os.WriteFile(ud, out.Data, 0o600))
	inst := filepath.Join(dir, "instance-data.json")
	require.NoError(t, os.WriteFile(inst, []byte(`{"ds": {"meta_data": {"local_ipv4": "192.0.2.77 {{ x }}"}},
 "v1": {"local_hostname": "node \"7\" \\ it's", "instance_id": "i-0abc{%"}}`), 0o600))
	rendered, err := exec.Command("cloud-init", "devel", "render", ud, "-i", inst).Output()
	require.NoError(t, err, "cloud-init devel render")

	var doc struct {
		WriteFiles []struct{ Path, Content string } `yaml:"write_files"`
		RunCmd     []string                         `yaml:"runcmd"`
	}
	require.NoError(t, yaml.Unmarshal(rendered, &doc), "%s", rendered)
	got := map[string]string{}
	for _, f := range doc.WriteFiles {
		got[f.Path] = f.Content
	}
	require.Equal(t, want, got["/etc/mixed"])
	require.Equal(t, name, got["/etc/value-only"])
	require.Equal(t, "{{ untouched }} {% if %}\n", got["/etc/untemplated"])

	var exports []string
	for _, l := range doc.RunCmd {
		if strings.HasPrefix(l, "export ") {
			exports = append(exports, l)
		}
	}
	require.Len(t, exports, 3)
	for _, v := range provisioning.NodeValues {
		sh := strings.Join(exports, "\n") + "\nprintf %s \"$" + v.Env() + "\""
		val, err := exec.Command("sh", "-c", sh).Output()
		require.NoError(t, err, sh)
		require.Equal(t, values[v], string(val), "%s through runcmd", v)
	}
}
