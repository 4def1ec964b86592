package ignition

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// seedRoot makes a Flatcar-like /etc with the accounts the vectors name
// (nobody:nogroup owners, adm/users groups), which ignition-apply then uses
// as is.
func seedRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	// Ignition writes ssh keys as the user, who must be able to reach the
	// home directory through the test's temporary directories.
	require.NoError(t, os.Chmod(root, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(root), 0o755))
	for _, d := range []string{"etc", "home/core", "root", "usr/bin", "usr/sbin", "var", "run", "tmp"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	files := map[string]string{
		"etc/passwd":  "root:x:0:0:root:/root:/bin/bash\ncore:x:500:500:Core User:/home/core:/bin/bash\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n",
		"etc/group":   "root:x:0:\nadm:x:4:\nwheel:x:10:root,core\nusers:x:100:\nsudo:x:150:\ndocker:x:233:core\ncore:x:500:\nnogroup:x:65534:\n",
		"etc/shadow":  "root:*:19000:0:99999:7:::\ncore:*:19000:0:99999:7:::\nnobody:*:19000:0:99999:7:::\n",
		"etc/gshadow": "root:*::\nadm:*::\nwheel:*::root,core\nusers:*::\nsudo:*::\ndocker:*::core\ncore:*::\nnogroup:*::\n",
		"etc/login.defs": "USERGROUPS_ENAB yes\nUID_MIN 1000\nUID_MAX 60000\nGID_MIN 1000\nGID_MAX 60000\nSYS_UID_MIN 100\nSYS_UID_MAX 999\n" +
			"SYS_GID_MIN 100\nSYS_GID_MAX 999\nCREATE_HOME yes\nENCRYPT_METHOD SHA512\n",
	}
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
	}
	require.NoError(t, os.Chown(filepath.Join(root, "home/core"), 500, 500))
	require.NoError(t, os.Chmod(filepath.Join(root, "etc/shadow"), 0o600))
	require.NoError(t, os.Chmod(filepath.Join(root, "etc/gshadow"), 0o600))
	return root
}

// apply runs the real Ignition files stage on config in a fresh root.
func apply(t *testing.T, config []byte) string {
	t.Helper()
	tool := testenv.Tool(t, "ignition-apply")
	testenv.RequireRoot(t)
	root := seedRoot(t)
	cfgPath := filepath.Join(t.TempDir(), "config.ign")
	require.NoError(t, os.WriteFile(cfgPath, config, 0o600))
	out, err := exec.Command(tool, root, cfgPath).CombinedOutput()
	require.NoError(t, err, "ignition-apply:\n%s", out)
	return root
}

// accounts reads name -> [uid or gid, home] from an /etc/passwd or /etc/group.
func accounts(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string][]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Split(s.Text(), ":")
		if len(fields) >= 3 {
			home := ""
			if len(fields) >= 6 {
				home = fields[5]
			}
			out[fields[0]] = []string{fields[2], home}
		}
	}
	return out
}

// decoded is the bytes a Plan file's content stands for.
func decoded(t *testing.T, f provisioning.File) []byte {
	t.Helper()
	raw := []byte(f.Content)
	if f.Encoding == provisioning.EncodingBase64 || f.Encoding == provisioning.EncodingGzipBase64 {
		var err error
		raw, err = base64.StdEncoding.DecodeString(f.Content)
		require.NoError(t, err)
	}
	if f.Encoding == provisioning.EncodingGzip || f.Encoding == provisioning.EncodingGzipBase64 {
		z, err := gzip.NewReader(bytes.NewReader(raw))
		require.NoError(t, err)
		raw, err = io.ReadAll(z)
		require.NoError(t, err)
	}
	return raw
}

// checkApplied verifies the node against the Plan: every file with its
// content, mode and owner; every user with groups, password lock, keys and
// sudo rule; the
// units; the command script with the commands in Plan order.
func checkApplied(t *testing.T, root string, p *provisioning.Plan) {
	t.Helper()
	passwd := accounts(t, filepath.Join(root, "etc/passwd"))
	group := accounts(t, filepath.Join(root, "etc/group"))
	want := map[string][]byte{}
	for _, f := range p.Files {
		if f.Append != nil && *f.Append {
			want[f.Path] = append(want[f.Path], decoded(t, f)...)
		} else {
			want[f.Path] = decoded(t, f)
		}
	}
	for _, f := range p.Files {
		got, err := os.ReadFile(filepath.Join(root, f.Path))
		require.NoError(t, err)
		require.Equal(t, string(want[f.Path]), string(got), f.Path)
		st, err := os.Stat(filepath.Join(root, f.Path))
		require.NoError(t, err)
		mode := "0644"
		if f.Permissions != "" {
			mode = f.Permissions
		}
		wantMode, _ := strconv.ParseUint(mode, 8, 32)
		require.Equal(t, os.FileMode(wantMode), st.Mode().Perm(), f.Path)
		user, grp, _ := strings.Cut(f.Owner, ":")
		sys := st.Sys().(*syscall.Stat_t)
		if user != "" {
			require.Equal(t, passwd[user][0], strconv.Itoa(int(sys.Uid)), "%s owner", f.Path)
		}
		if grp != "" {
			require.Equal(t, group[grp][0], strconv.Itoa(int(sys.Gid)), "%s group", f.Path)
		}
	}
	for _, u := range p.Users {
		require.Contains(t, passwd, u.Name)
		home := passwd[u.Name][1]
		if u.HomeDir != "" {
			require.Equal(t, u.HomeDir, home)
		}
		if len(u.SSHAuthorizedKeys) > 0 {
			keys, err := os.ReadFile(filepath.Join(root, home, ".ssh/authorized_keys.d/ignition"))
			require.NoError(t, err)
			require.Equal(t, strings.Join(u.SSHAuthorizedKeys, "\n")+"\n", string(keys))
		}
		for _, g := range strings.Split(u.Groups, ",") {
			if g = strings.TrimSpace(g); g != "" {
				require.Contains(t, members(t, root, g), u.Name, "%s in group %s", u.Name, g)
			}
		}
		if u.Passwd != "" {
			hash := shadowHash(t, root, u.Name)
			if u.LockPassword != nil && !*u.LockPassword {
				require.Equal(t, u.Passwd, hash, "%s: usable password", u.Name)
			} else {
				require.Equal(t, "!"+u.Passwd, hash, "%s: locked password", u.Name)
			}
		}
		if u.Sudo != "" {
			rule, err := os.ReadFile(filepath.Join(root, "etc/sudoers.d", u.Name))
			require.NoError(t, err)
			require.Equal(t, u.Name+" "+u.Sudo+"\n", string(rule))
		}
	}
	preset, err := os.ReadFile(filepath.Join(root, "etc/systemd/system-preset/20-ignition.preset"))
	require.NoError(t, err)
	presets := strings.Split(strings.TrimSpace(string(preset)), "\n")
	unit, err := os.ReadFile(filepath.Join(root, "etc/systemd/system/nodeboot-bootstrap.service"))
	require.NoError(t, err)
	require.Contains(t, presets, "enable nodeboot-bootstrap.service")
	require.Contains(t, strings.Split(string(unit), "\n"), "ExecStart=/bin/bash /etc/nodeboot/bootstrap.sh")
	for _, m := range p.Mounts {
		_, err := os.Stat(filepath.Join(root, "etc/systemd/system", systemdPathEscape(m[1])+".mount"))
		require.NoError(t, err, "mount unit for %s", m[1])
	}
	if len(p.BootCommands) > 0 {
		require.Contains(t, presets, "enable nodeboot-bootcmd.service")
		script, err := os.ReadFile(filepath.Join(root, "etc/nodeboot/bootcmd.sh"))
		require.NoError(t, err)
		requireInOrder(t, string(script), p.BootCommands)
	}
	script, err := os.ReadFile(filepath.Join(root, "etc/nodeboot/bootstrap.sh"))
	require.NoError(t, err)
	var steps []string
	for _, phase := range []provisioning.Phase{provisioning.PhasePre, provisioning.PhaseBootstrap} {
		for _, c := range p.CommandsIn(phase) {
			steps = append(steps, c.Script)
		}
	}
	steps = append(steps, "echo success > '"+p.Sentinel+"'")
	for _, c := range p.CommandsIn(provisioning.PhasePost) {
		steps = append(steps, c.Script)
	}
	requireInOrder(t, string(script), steps)
}

// requireInOrder checks that each step is a whole part of the script and
// that they appear in order.
func requireInOrder(t *testing.T, script string, steps []string) {
	t.Helper()
	at := 0
	for _, s := range steps {
		i := strings.Index(script[at:], s)
		require.GreaterOrEqual(t, i, 0, "step %q missing or out of order in:\n%s", s, script)
		at += i + len(s)
	}
}

// systemdPathEscape is systemd-escape --path for the plain paths vectors use.
func systemdPathEscape(p string) string {
	return strings.ReplaceAll(strings.ReplaceAll(strings.Trim(p, "/"), "-", `\x2d`), "/", "-")
}

// TestV3VectorsApply applies every vector, rendered as Ignition 3.4.0, with
// the real Ignition engine, plus one gzip-wrapped config.
func TestV3VectorsApply(t *testing.T) {
	for _, dir := range allVectors(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			res := buildWith(t, dir, "3.4.0", v3Buildable)
			out, err := res.Render()
			require.NoError(t, err)
			checkApplied(t, apply(t, out.Data), res.Plan)
		})
	}
	t.Run("gzip-wrapped", func(t *testing.T) {
		res := buildWith(t, filepath.Join(testenv.VectorsDir(t), "cc-init-all-features-v1.35"), "3.4.0", v3Buildable)
		res.Options.Compress = true
		out, err := res.Render()
		require.NoError(t, err)
		require.Less(t, out.Sizes["total"], out.Sizes["uncompressed"])
		checkApplied(t, apply(t, out.Data), res.Plan)
	})
}

// members lists the users of group g in the root's /etc/group.
func members(t *testing.T, root, g string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "etc/group"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, ":")
		if len(f) == 4 && f[0] == g {
			return strings.Split(f[3], ",")
		}
	}
	t.Fatalf("group %s not in /etc/group", g)
	return nil
}

// shadowHash is the password field of user in the root's /etc/shadow.
func shadowHash(t *testing.T, root, user string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "etc/shadow"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Split(line, ":"); len(f) > 1 && f[0] == user {
			return f[1]
		}
	}
	t.Fatalf("user %s not in /etc/shadow", user)
	return ""
}
