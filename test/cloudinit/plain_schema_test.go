package cloudinit_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	yaml "gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning/plantest"
	"github.com/nodeboot/nodeboot/test/testenv"
)

var plainOpts = provisioning.Options{Version: cloudinit.VersionPlain}

// TestPlainDiskSchemaGaps: a partition number and a partition type without
// a decimal code are what cloud-init 22.4's schema rejects although its disk
// module uses them; the plain dialect renders them and warns at exactly the
// fields the schema names.
func TestPlainDiskSchemaGaps(t *testing.T) {
	p := &provisioning.Plan{Disks: &provisioning.DiskSetup{
		Partitions:  []provisioning.Partition{{Device: "/dev/vdb", DiskLayout: []provisioning.PartitionSpec{{Percentage: 50, PartitionType: "LVM"}, {Percentage: 50, PartitionType: "Linux"}}}},
		Filesystems: []provisioning.Filesystem{{Device: "/dev/vdb", Filesystem: "ext4", Partition: "2"}},
	}}
	out, err := (&cloudinit.Renderer{}).Render(p, plainOpts)
	require.NoError(t, err)
	var warned []string
	for _, w := range out.Warnings {
		warned = append(warned, w.Path.String())
	}
	require.Equal(t, []string{"disks.partitions[0].diskLayout[0].partitionType", "disks.filesystems[0].partition"}, warned)
	res := testenv.CloudInitLoad(t, [][]byte{out.Data})[0]
	require.False(t, res.Valid)
	require.ElementsMatch(t, []string{"disk_setup./dev/vdb.layout", "fs_setup.0.partition"}, res.SchemaPaths)
	doc := jsonValue(t, res.Data).(map[string]any)
	require.Equal(t, []any{[]any{50.0, "8e"}, []any{50.0, 83.0}}, doc["disk_setup"].(map[string]any)["/dev/vdb"].(map[string]any)["layout"])
	require.Equal(t, 2.0, doc["fs_setup"].([]any)[0].(map[string]any)["partition"])
}

// strictValidate runs cloud-init's schema with --strict on all files in one
// call and returns the files it failed.
func strictValidate(t *testing.T, files []string) []string {
	t.Helper()
	tool := testenv.Tool(t, "cloudinit-validate")
	out, err := exec.Command(tool, append([]string{"--strict"}, files...)...).CombinedOutput()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 1) {
		t.Fatalf("cloudinit-validate: %v\n%s", err, out)
	}
	var failed []string
	seen := 0
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range files {
			if rest, ok := strings.CutPrefix(line, "OK "+f); ok && (rest == "" || rest[0] == ' ' || rest[0] == ':') {
				seen++
			}
			if rest, ok := strings.CutPrefix(line, "FAIL "+f); ok && (rest == "" || rest[0] == ' ' || rest[0] == ':') {
				seen++
				failed = append(failed, f)
			}
		}
	}
	require.Equal(t, len(files), seen, "cloudinit-validate named every file once:\n%s", out)
	if len(failed) > 0 {
		t.Logf("cloudinit-validate:\n%s", out)
	}
	return failed
}

// TestPlainPassesCloudInitSchema: every plan of the table renders in the
// plain dialect to a document cloud-init's schema accepts with --strict,
// and cloud-init's own YAML loader reads exactly the document that was
// meant (what a YAML 1.2 library reads), so no value changes type or text
// on the way (YAML 1.1's on/yes, 0640, 1:20).
func TestPlainPassesCloudInitSchema(t *testing.T) {
	dir := t.TempDir()
	plans := plantest.Plans()
	var names, files []string
	var docs [][]byte
	for name, p := range plans {
		out, err := (&cloudinit.Renderer{}).Render(p, plainOpts)
		require.NoError(t, err, name)
		require.Empty(t, out.Warnings, name)
		require.True(t, bytes.HasPrefix(out.Data, []byte("#cloud-config\n")), name)
		require.NotContains(t, string(out.Data), "## template: jinja", name)
		require.NotContains(t, string(out.Data), "/run/cluster-api", name)
		f := filepath.Join(dir, name+".yaml")
		require.NoError(t, os.WriteFile(f, out.Data, 0o600))
		names, files, docs = append(names, name), append(files, f), append(docs, out.Data)
	}
	require.Empty(t, strictValidate(t, files), "the plain dialect must pass cloud-init's schema")
	loaded := testenv.CloudInitLoad(t, docs)
	for i, res := range loaded {
		require.True(t, res.Valid, "%s: %s", names[i], res.Error)
		var meant any
		require.NoError(t, yaml.Unmarshal(docs[i], &meant), names[i])
		require.Equal(t, jsonValue(t, meant), jsonValue(t, res.Data), "%s: cloud-init reads another document than the one meant", names[i])
	}
	// What cloud-init reads is the Plan's values, not merely ours.
	byName := map[string]map[string]any{}
	for i, res := range loaded {
		byName[names[i]] = jsonValue(t, res.Data).(map[string]any)
	}
	k3s := byName["k3s"]
	files0 := k3s["write_files"].([]any)
	require.Equal(t, plantest.K3s().Files[1].Content, files0[1].(map[string]any)["content"], "{{ }} in content is data")
	require.Equal(t, "ALL=(ALL) NOPASSWD: ALL", k3s["users"].([]any)[0].(map[string]any)["sudo"])
	require.Equal(t, true, files0[2].(map[string]any)["defer"], "a file owned by a Plan user is written after users-groups")
	require.Nil(t, files0[0].(map[string]any)["defer"], "a root file is not deferred")
	require.Equal(t, []any{
		"set -e", "/bin/sh -e -c 'systemctl daemon-reload'",
		"/bin/sh -e -c 'systemctl enable k3s.service'",
		"/bin/sh -e -c 'systemctl try-restart containerd.service'",
		"/bin/sh -e -c 'systemctl disable --now apt-daily.timer'",
		"/bin/sh -e -c 'echo {{ not jinja }} > /tmp/pre'",
		"/bin/sh -e -c 'systemctl restart k3s.service'",
		"/bin/sh -e -c 'k3s server --cluster-init'",
		"mkdir -p '/run/k3s-bootstrap' && echo success > '/run/k3s-bootstrap/success'",
		"/bin/sh -e -c 'echo done: ok > /tmp/post'",
	}, k3s["runcmd"])
	users := byName["users"]["users"].([]any)
	require.Equal(t, "0640", users[2].(map[string]any)["name"])
	require.Equal(t, "1:20", users[2].(map[string]any)["gecos"])
	require.Equal(t, "yes", users[1].(map[string]any)["gecos"])
	require.Equal(t, "1970-01-02", users[1].(map[string]any)["expiredate"])
}

func jsonValue(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}
