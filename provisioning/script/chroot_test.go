package script_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/internal/sharedtest"
	"github.com/nodeboot/nodeboot/provisioning/script"
)

// The scripts run for real, as root, with the Debian bookworm root that
// ../shared/tools/cloudinit-apply builds and caches: dash as /bin/sh, and
// the real useradd, chpasswd, visudo, base64 and gzip.

// rootTarball is the cached root, built by cloudinit-apply when missing.
func rootTarball(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not running scripts in a chroot")
	}
	if os.Geteuid() != 0 {
		t.Fatal("running scripts in a chroot needs root")
	}
	cache := os.Getenv("VALIDATORS_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			base = filepath.Join(os.Getenv("HOME"), ".cache")
		}
		cache = filepath.Join(base, "validators")
	}
	tarball := filepath.Join(cache, "bookworm-cloudinit-rootfs.tar.gz")
	if _, err := os.Stat(tarball); err == nil {
		return tarball
	}
	// The tool builds the root on its first run (minutes, once).
	tool := filepath.Join(sharedtest.Dir(t), "tools", "cloudinit-apply")
	dir := t.TempDir()
	ud := filepath.Join(dir, "user-data")
	if err := os.WriteFile(ud, []byte("#cloud-config\n{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tool, filepath.Join(dir, "root"), ud).CombinedOutput(); err != nil {
		t.Fatalf("cloudinit-apply (to build the cached root): %v\n%s", err, out)
	}
	return tarball
}

var unpackMu sync.Mutex

// newRoot unpacks a fresh root (about 5 s) without what scripts never use.
func newRoot(t *testing.T) string {
	t.Helper()
	tarball := rootTarball(t)
	unpackMu.Lock()
	defer unpackMu.Unlock()
	dir := t.TempDir()
	cmd := exec.Command("tar", "--numeric-owner", "-xzpf", tarball, "-C", dir,
		"--exclude=./usr/lib/python3*", "--exclude=./usr/share/doc", "--exclude=./usr/share/man", "--exclude=./usr/share/locale")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unpack root: %v\n%s", err, out)
	}
	return dir
}

type result struct {
	code           int
	stdout, stderr string
}

// run renders plan and runs the script in root with /bin/sh, in private
// mount, network and pid namespaces.
func run(t *testing.T, root string, plan *provisioning.Plan) result {
	t.Helper()
	out, err := (&script.Renderer{}).Render(plan, provisioning.Options{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return runScript(t, root, out.Data)
}

func runScript(t *testing.T, root string, data []byte) result {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, "nodeboot.sh"), data, 0o700); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("unshare", "--mount", "--net", "--pid", "--fork", "chroot", root, "/nodeboot.sh")
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C"}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run script: %v", err)
	}
	return r
}

// account is one line of a colon-separated account database in root.
func account(t *testing.T, root, db, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "etc", db))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Split(line, ":"); f[0] == name {
			return f
		}
	}
	t.Fatalf("%s has no entry %q", db, name)
	return nil
}

func id(t *testing.T, root, db, name string) uint32 {
	t.Helper()
	n, err := strconv.Atoi(account(t, root, db, name)[2])
	if err != nil {
		t.Fatal(err)
	}
	return uint32(n)
}

type node struct {
	content  string
	mode     os.FileMode
	uid, gid uint32
}

func stat(t *testing.T, root, p string) node {
	t.Helper()
	fi, err := os.Lstat(filepath.Join(root, p))
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	n := node{mode: fi.Mode() & os.ModePerm, uid: st.Uid, gid: st.Gid}
	if fi.Mode().IsRegular() {
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		n.content = string(data)
	}
	return n
}

func absent(t *testing.T, root, p string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(root, p)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists (err %v), it must not", p, err)
	}
}

func TestRunInChroot(t *testing.T) {
	root := newRoot(t)

	t.Run("every feature", func(t *testing.T) {
		r := run(t, root, fullPlan(t))
		if r.code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		kube := id(t, root, "passwd", "kube")
		kubeGroup := id(t, root, "group", "kube")
		want := map[string]node{
			"/etc/nodeboot/plain.conf":                         {"key: value\n", 0o640, kube, kubeGroup},
			"/etc/nodeboot/hostile.txt":                        {hostile, 0o644, 0, 0},
			"/etc/nodeboot/no-newline":                         {"no final newline", 0o644, 0, 0},
			"/etc/nodeboot/empty":                              {"", 0o644, 0, 0},
			"/etc/nodeboot/b64":                                {"decoded from base64\n", 0o600, 0, 0},
			"/etc/nodeboot/gz":                                 {"decoded from gzip\n", 0o644, 0, 0},
			"/etc/nodeboot/gzb64":                              {"decoded from gzip+base64\n", 0o644, 0, 0},
			"/etc/nodeboot/append":                             {"first\nsecond\n", 0o644, 0, 0},
			"/var/lib/deep/new/dirs/file":                      {"#!/bin/sh\nexit 0\n", 0o755, 0, 0},
			"/var/lib/deep/new":                                {"", 0o755, 0, 0},
			"/etc/nodeboot/template.yaml":                      {"value: {{ .Values.x }}\n", 0o644, 0, 0},
			"/etc/sudoers.d/90-nodeboot-users":                 {"kube ALL=(ALL) NOPASSWD:ALL\n", 0o440, 0, 0},
			"/etc/systemd/system/demo.service":                 {fullPlan(t).Units[0].Contents, 0o644, 0, 0},
			"/etc/systemd/system/demo.service.d/10-env.conf":   {"[Service]\nEnvironment=A=1\n", 0o644, 0, 0},
			"/etc/systemd/system/image.service.d/20-more.conf": {"[Service]\nEnvironment=B=2\n", 0o644, 0, 0},
			"/run/cluster-api/bootstrap-success.complete":      {"success\n", 0o644, 0, 0},
			"/var/log/nodeboot-order":                          {"boot\npre1\nit's pre2\nbootstrap\npost\n", 0o644, 0, 0}, // written by the commands, umask 022
		}
		// The login group of kube is its own (USERGROUPS_ENAB).
		want["/home/kube/.ssh"] = node{"", 0o700, kube, kubeGroup}
		want["/home/kube/.ssh/authorized_keys"] = node{strings.Join(fullPlan(t).Users[0].SSHAuthorizedKeys, "\n") + "\n", 0o600, kube, kubeGroup}
		for p, w := range want {
			if got := stat(t, root, p); got != w {
				t.Errorf("%s:\n got %+v\nwant %+v", p, got, w)
			}
		}
		absent(t, root, "/tmp/pwned")
		absent(t, root, "/etc/sudoers.d/.90-nodeboot-users.new")

		pw := account(t, root, "passwd", "kube")
		if pw[4] != "Kube Admin" || pw[5] != "/home/kube" || pw[6] != "/bin/sh" {
			t.Errorf("passwd entry of kube: %q", pw)
		}
		if sh := account(t, root, "shadow", "kube"); sh[1] != "$6$rounds=4096$salt$hashhashhash" {
			t.Errorf("kube's hash is %q, want the Plan's, unlocked", sh[1])
		}
		locked := account(t, root, "shadow", "locked")
		if !strings.HasPrefix(locked[1], "!") || locked[7] != "1" {
			t.Errorf("locked: password %q must be locked and expiry %q 1", locked[1], locked[7])
		}
		if pw := account(t, root, "passwd", "locked"); pw[3] != strconv.Itoa(int(id(t, root, "group", "lockgrp"))) {
			t.Errorf("locked's primary group is %s, want lockgrp", pw[3])
		}
		if sh := account(t, root, "shadow", "root"); !strings.HasPrefix(sh[1], "!") {
			t.Errorf("root's password %q: lockPassword defaults to true", sh[1])
		}
		for g, members := range map[string]string{"kubeops": "kube,root", "adm": "kube"} {
			if got := account(t, root, "group", g)[3]; got != members {
				t.Errorf("group %s members %q, want %q", g, got, members)
			}
		}
		if !strings.Contains(r.stderr, "nodeboot: systemctl not found") {
			t.Errorf("without systemctl the script must say units are not enabled; stderr:\n%s", r.stderr)
		}
	})

	t.Run("a failing command stops the script with its exit code", func(t *testing.T) {
		plan := &provisioning.Plan{
			Files: []provisioning.File{{Path: "/fail1/written", Content: "x\n"}},
			Commands: []provisioning.Command{
				{Phase: provisioning.PhasePre, Script: "true"},
				{Phase: provisioning.PhasePre, Script: "echo before; exit 7; echo after"},
				{Phase: provisioning.PhaseBootstrap, Script: "touch /fail1/bootstrap-ran"},
				{Phase: provisioning.PhasePost, Script: "touch /fail1/post-ran"},
			},
			Sentinel: "/fail1/sentinel",
		}
		r := run(t, root, plan)
		if r.code != 7 {
			t.Fatalf("exit %d, want 7\nstderr:\n%s", r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "nodeboot: commands[1] failed with exit code 7") || strings.Contains(r.stdout, "after") {
			t.Errorf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		}
		stat(t, root, "/fail1/written")
		absent(t, root, "/fail1/bootstrap-ran")
		absent(t, root, "/fail1/post-ran")
		absent(t, root, "/fail1/sentinel")
	})

	t.Run("a failing line inside a command fails it", func(t *testing.T) {
		plan := &provisioning.Plan{
			Commands: []provisioning.Command{
				{Phase: provisioning.PhaseBootstrap, Script: "false\ntouch /fail2/after-false"},
				{Phase: provisioning.PhasePost, Script: "touch /fail2/post-ran"},
			},
			Sentinel: "/fail2/sentinel",
		}
		if r := run(t, root, plan); r.code != 1 {
			t.Fatalf("exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
		}
		absent(t, root, "/fail2/after-false")
		absent(t, root, "/fail2/sentinel")
		absent(t, root, "/fail2/post-ran")
	})

	t.Run("a sudo rule visudo rejects is not installed", func(t *testing.T) {
		plan := &provisioning.Plan{
			Users:    []provisioning.User{{Name: "badsudo", Sudo: "ALL=(ALL"}},
			Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}},
			Sentinel: "/fail3/sentinel",
		}
		if r := run(t, root, plan); r.code == 0 {
			t.Fatalf("exit 0, want a failure\nstderr:\n%s", r.stderr)
		}
		if got := stat(t, root, "/etc/sudoers.d/90-nodeboot-users").content; got != "kube ALL=(ALL) NOPASSWD:ALL\n" {
			t.Errorf("the installed rules changed to %q", got)
		}
		absent(t, root, "/fail3/sentinel")
	})

	t.Run("setuid and setgid survive the owner", func(t *testing.T) {
		plan := &provisioning.Plan{
			Files: []provisioning.File{
				{Path: "/suid/owned", Permissions: "4755", Owner: "nobody", Content: "#!/bin/sh\n"},
				{Path: "/suid/sgid", Permissions: "2755", Owner: "root:nogroup", Content: "#!/bin/sh\n"},
				{Path: "/suid/unowned", Permissions: "4750", Content: "#!/bin/sh\n"},
			},
			Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}},
		}
		if r := run(t, root, plan); r.code != 0 {
			t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
		}
		for p, want := range map[string]os.FileMode{"/suid/owned": os.ModeSetuid | 0o755, "/suid/sgid": os.ModeSetgid | 0o755, "/suid/unowned": os.ModeSetuid | 0o750} {
			fi, err := os.Stat(filepath.Join(root, p))
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky); got != want {
				t.Errorf("%s: mode %v, want %v", p, got, want)
			}
		}
		if got := stat(t, root, "/suid/owned").uid; got != id(t, root, "passwd", "nobody") {
			t.Errorf("/suid/owned: uid %d, want nobody's", got)
		}
	})

	t.Run("a missing tool stops the script before any change", func(t *testing.T) {
		// A unit file without a final newline travels as base64.
		b64 := filepath.Join(root, "usr/bin/base64")
		if err := os.Rename(b64, b64+".off"); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := os.Rename(b64+".off", b64); err != nil {
				t.Fatal(err)
			}
		}()
		plan := &provisioning.Plan{
			Files:    []provisioning.File{{Path: "/needs/first", Content: "x\n"}},
			Units:    []provisioning.Unit{{Name: "needs.service", Contents: "[Service]\nExecStart=/bin/true"}},
			Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}},
		}
		r := run(t, root, plan)
		if r.code != 127 || !strings.Contains(r.stderr, "base64 is required") {
			t.Errorf("exit %d, want 127 naming base64\nstderr:\n%s", r.code, r.stderr)
		}
		absent(t, root, "/needs/first")
		absent(t, root, "/etc/systemd/system/needs.service")
	})

	t.Run("units with systemd running and offline", func(t *testing.T) {
		stub := "#!/bin/sh\nprintf '%s %s\\n' \"${SYSTEMD_OFFLINE:-running}\" \"$*\" >> /var/log/systemctl-calls\n"
		if err := os.WriteFile(filepath.Join(root, "usr/local/bin/systemctl"), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(filepath.Join(root, "usr/local/bin/systemctl"))
		plan := &provisioning.Plan{Units: fullPlan(t).Units}
		calls := filepath.Join(root, "var/log/systemctl-calls")
		if err := os.MkdirAll(filepath.Join(root, "run/systemd/system"), 0o755); err != nil {
			t.Fatal(err)
		}
		if r := run(t, root, plan); r.code != 0 {
			t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
		}
		if got := stat(t, root, "/var/log/systemctl-calls").content; got != "running daemon-reload\nrunning enable demo.service\nrunning try-restart image.service\nrunning disable --now off.service\nrunning restart demo.service\n" {
			t.Errorf("with systemd running, systemctl calls:\n%s", got)
		}
		if err := os.RemoveAll(filepath.Join(root, "run/systemd")); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(calls); err != nil {
			t.Fatal(err)
		}
		if r := run(t, root, plan); r.code != 0 {
			t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
		}
		if got := stat(t, root, "/var/log/systemctl-calls").content; got != "1 enable demo.service\n1 disable off.service\n" {
			t.Errorf("without systemd running, systemctl calls:\n%s", got)
		}
	})
}
