package cloudinit_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	yaml "gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/test/testenv"
)

var plainOpts = provisioning.Options{Version: cloudinit.VersionPlain}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func gz(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.String()
}

// k3sPlan is what a k3s provider would build: no kubeadm, no bootstrap
// input, a HelmChart manifest full of {{ }}, a sudo rule with ": ".
func k3sPlan() *provisioning.Plan {
	return &provisioning.Plan{
		Role: provisioning.RoleInit,
		Files: []provisioning.File{
			{Path: "/etc/rancher/k3s/config.yaml", Owner: "root:root", Permissions: "0600", Content: "token: {{ .Token }}\nwrite-kubeconfig-mode: \"0644\"\n"},
			{Path: "/var/lib/rancher/k3s/server/manifests/chart.yaml", Permissions: "0644",
				Content: "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nspec:\n  valuesContent: |-\n    image: {{ .Values.image }}\n    {% raw %}x{% endraw %}\n"},
			{Path: "/home/ops/.config/app", Owner: "ops:ops", Permissions: "0640", Content: "owned by a user the plan creates\n"},
		},
		Users: []provisioning.User{{
			Name: "ops", Gecos: "Ops: on-call #2", Groups: "adm, sudo", Shell: "/bin/bash", Sudo: "ALL=(ALL) NOPASSWD: ALL",
			SSHAuthorizedKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE1k3sTestKeyOnlyForTests ops@example"},
		}},
		Units: []provisioning.Unit{
			{Name: "k3s.service", Enabled: yes(), Contents: "[Unit]\nDescription=k3s\n[Service]\nExecStart=/usr/local/bin/k3s server\n[Install]\nWantedBy=multi-user.target\n",
				DropIns: []provisioning.DropIn{{Name: "10-env.conf", Contents: "[Service]\nEnvironment=K3S_KUBECONFIG_MODE=0644\n"}}},
			{Name: "containerd.service", DropIns: []provisioning.DropIn{{Name: "20-limits.conf", Contents: "[Service]\nLimitNOFILE=1048576\n"}}},
			{Name: "apt-daily.timer", Enabled: no(), DropIns: []provisioning.DropIn{{Name: "off.conf", Contents: "[Timer]\nPersistent=false\n"}}},
		},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePre, Script: "echo {{ not jinja }} > /tmp/pre"},
			{Phase: provisioning.PhaseBootstrap, Script: "k3s server --cluster-init"},
			{Phase: provisioning.PhasePost, Script: "echo done: ok > /tmp/post"},
		},
		Sentinel: "/run/k3s-bootstrap/success",
	}
}

// plainPlans are the table the plain dialect is checked on, one feature
// family each.
func plainPlans() map[string]*provisioning.Plan {
	plans := map[string]*provisioning.Plan{"k3s": k3sPlan()}
	plans["files"] = &provisioning.Plan{Files: []provisioning.File{
		{Path: "/etc/plain", Content: "{{ x }} {% if %} {# c #}\n: - ? * & ! | > ' \" % @ `\n"},
		{Path: "/etc/b64", Permissions: "0644", Encoding: provisioning.EncodingBase64, Content: base64.StdEncoding.EncodeToString([]byte("base64\n"))},
		{Path: "/etc/gz", Permissions: "0644", Encoding: provisioning.EncodingGzip, Content: gz("raw gzip\n")},
		{Path: "/etc/gzb64", Permissions: "0644", Encoding: provisioning.EncodingGzipBase64, Content: base64.StdEncoding.EncodeToString([]byte(gz("gzip+base64\n")))},
		{Path: "/etc/latin1", Permissions: "0644", Content: "caf\xe9\n"},
		{Path: "/etc/control", Permissions: "0644", Content: "tab\there\r\nbell\a\x00nul\u2028sep\n"},
		{Path: "/etc/plain", Append: yes(), Content: "appended\n"},
		{Path: "/etc/no-newline", Permissions: "644", Content: "  leading blanks, no newline"},
		{Path: "/etc/empty", Content: ""},
	}}
	plans["users"] = &provisioning.Plan{Users: []provisioning.User{
		{Name: "ops", Sudo: "ALL=(ALL) NOPASSWD: ALL", Groups: "adm,sudo", PrimaryGroup: "ops", HomeDir: "/home/ops",
			Passwd: "$6$rounds=4096$salt$hash", LockPassword: no(), SSHAuthorizedKeys: []string{"ssh-rsa AAAA key #1", "ssh-ed25519 AAAA key: two"}},
		{Name: "on", Gecos: "yes", Shell: "/bin/sh", Inactive: yes(), LockPassword: yes()},
		{Name: "0640", Gecos: "1:20", Shell: "2001-12-14", Sudo: "ALL=(ALL:ALL) ALL"},
	}}
	plans["boot-commands"] = &provisioning.Plan{BootCommands: []string{"echo {{ early }}", "mkdir -p /run/x: y", "- not a list", "true # comment"}}
	plans["commands"] = &provisioning.Plan{
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePost, Script: "echo post"},
			{Phase: provisioning.PhasePre, Script: "echo 'pre'\necho second line"},
			{Phase: provisioning.PhaseBootstrap, Script: "rke2 server"},
		},
		Sentinel: "/run/rke2/bootstrapped",
	}
	plans["ntp"] = &provisioning.Plan{NTP: &provisioning.NTP{Enabled: yes(), Servers: []string{"0.pool.ntp.org", "time.example.com"}}}
	plans["mounts"] = &provisioning.Plan{Mounts: []provisioning.Mount{{"/dev/vdb", "/var/lib/rancher", "ext4", "defaults,nofail", "0", "2"}, {"LABEL=data", "/data"}}}
	plans["disks"] = &provisioning.Plan{Disks: &provisioning.DiskSetup{
		Partitions: []provisioning.Partition{
			{Device: "/dev/vdb", Layout: yes(), TableType: "gpt", Overwrite: no()},
			{Device: "/dev/vdc", TableType: "mbr", DiskLayout: []provisioning.PartitionSpec{{Percentage: 50, PartitionType: "Linux"}, {Percentage: 20, PartitionType: "LinuxSwap"}, {Percentage: 30}}},
			{Device: "/dev/vdd"},
		},
		Filesystems: []provisioning.Filesystem{
			{Device: "/dev/vdb", Filesystem: "ext4", Label: "data", Partition: "none", Overwrite: no(), ExtraOpts: []string{"-E", "lazy_itable_init=1"}},
			{Device: "/dev/vdc", Filesystem: "xfs", Label: "logs", Partition: "auto", ReplaceFS: "ntfs"},
		},
	}}
	plans["units-only"] = &provisioning.Plan{Units: []provisioning.Unit{{Name: `dev-disk-by\x2dlabel-swap.swap`, Contents: "[Swap]\nWhat=/dev/disk/by-label/swap\n", Enabled: yes()}}}
	plans["empty"] = &provisioning.Plan{}
	return plans
}

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
	plans := plainPlans()
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
	require.Equal(t, k3sPlan().Files[1].Content, files0[1].(map[string]any)["content"], "{{ }} in content is data")
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

// TestPlainRefuses: what the plain dialect cannot carry is an error naming
// the field, matching provisioning.ErrInvalid or ErrUnsupported, and never
// quoting the value.
func TestPlainRefuses(t *testing.T) {
	const secret = "s3cr3t-value"
	tests := []struct {
		name   string
		plan   *provisioning.Plan
		opts   provisioning.Options
		path   string
		target error
	}{
		{"nil plan", nil, plainOpts, "", provisioning.ErrInvalid},
		{"sudo on two lines", &provisioning.Plan{Users: []provisioning.User{{Name: "ops", Sudo: "ALL=(ALL) ALL\n" + secret}}}, plainOpts, "users[0].sudo", provisioning.ErrInvalid},
		{"mount field with a blank", &provisioning.Plan{Mounts: []provisioning.Mount{{"/dev/vdb", "/mnt/" + secret + " x"}}}, plainOpts, "mounts[0][1]", provisioning.ErrInvalid},
		{"additional config", &provisioning.Plan{}, provisioning.Options{Version: cloudinit.VersionPlain, AdditionalConfig: []byte(secret)}, "additionalConfig", provisioning.ErrUnsupported},
		{"hazard is an error", &provisioning.Plan{Files: []provisioning.File{{Path: "/etc/a/../" + secret}}}, plainOpts, "files[0].path", provisioning.ErrInvalid},
		{"bad unit", &provisioning.Plan{Units: []provisioning.Unit{{Name: secret, Contents: "x"}}}, plainOpts, "units[0].name", provisioning.ErrInvalid},
		{"unknown version", &provisioning.Plan{}, provisioning.Options{Version: "plain2"}, "options.version", cloudinit.ErrUnknownVersion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &cloudinit.Renderer{}
			_, err := r.Render(tc.plan, tc.opts)
			require.Error(t, err)
			require.ErrorIs(t, err, tc.target)
			require.NotContains(t, err.Error(), secret)
			var ps provisioning.Problems
			require.ErrorAs(t, err, &ps)
			found := false
			for _, p := range ps.Errors() {
				found = found || p.Path.String() == tc.path
			}
			require.True(t, found, "no error at %q in %v", tc.path, err)
			require.NotEmpty(t, r.Check(tc.plan, tc.opts).Errors(), "Check agrees with Render")
		})
	}
}

// TestPlainCompressAndBudget: Compress gzips the document and says so;
// MaxBytes is a budget.
func TestPlainCompressAndBudget(t *testing.T) {
	r := &cloudinit.Renderer{}
	plain, err := r.Render(k3sPlan(), plainOpts)
	require.NoError(t, err)
	require.False(t, plain.Compressed)
	require.Equal(t, len(plain.Data), plain.Sizes[provisioning.SizeTotal])
	require.Positive(t, plain.Sizes[provisioning.SizeWriteFiles])
	require.Positive(t, plain.Sizes[provisioning.SizeCommands])
	opts := plainOpts
	opts.Compress = true
	z, err := r.Render(k3sPlan(), opts)
	require.NoError(t, err)
	require.True(t, z.Compressed)
	zr, err := gzip.NewReader(bytes.NewReader(z.Data))
	require.NoError(t, err)
	var inflated bytes.Buffer
	_, err = inflated.ReadFrom(zr)
	require.NoError(t, err)
	require.Equal(t, plain.Data, inflated.Bytes())
	require.Equal(t, len(plain.Data), z.Sizes[provisioning.SizeUncompressed])
	opts = plainOpts
	opts.MaxBytes = len(plain.Data) - 1
	_, err = r.Render(k3sPlan(), opts)
	require.ErrorIs(t, err, provisioning.ErrTooLarge)
}

// TestPlainEmittedAsYAMLv3: the plain dialect writes each table Plan's
// document without yaml.v3 where it can (the k3s Plan, which
// BenchmarkRenderDialects times, among them), and those bytes are
// yaml.v3's own.
func TestPlainEmittedAsYAMLv3(t *testing.T) {
	emitted := 0
	for name, p := range plainPlans() {
		got, want, ok, err := cloudinit.PlainEmitted(p)
		require.NoError(t, err, name)
		if ok {
			emitted++
			require.Equal(t, string(want), string(got), name)
		}
		if name == "k3s" {
			require.True(t, ok, "the k3s Plan is left to yaml.v3")
		}
	}
	t.Logf("%d of %d Plans written without yaml.v3", emitted, len(plainPlans()))
}
