package conformance_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/conformance"
)

// verifyCase is a Case's expectation and a node root that meets it: a file
// owned by the test's own user (named "owner" in the node's passwd), an
// absent path, a user in a group with an SSH key, a unit with a drop-in
// enabled and started after a logged line, a text found in one of two
// files, the commands' log and exit code.
func verifyCase(t *testing.T) (conformance.Case, conformance.Node) {
	t.Helper()
	root := t.TempDir()
	write := func(p, content string, mode os.FileMode) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, mode); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	uid, gid := strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())
	write("/etc/passwd", "owner:x:"+uid+":"+gid+"::/root:/bin/sh\nops:x:4242:4242::/home/ops:/bin/sh\n", 0o644)
	write("/etc/group", "owner:x:"+gid+":\nops:x:4242:\ndocker:x:4243:ops\n", 0o644)
	write("/etc/app.conf", "setting=1\n", 0o640)
	write("/home/ops/.ssh/authorized_keys", "ssh-ed25519 AAAAC3Nza ops@laptop\n", 0o600)
	write(provisioning.UnitFile("app.service"), "[Service]\nExecStart=/bin/true\n", 0o644)
	write(provisioning.DropInFile("app.service", "10-env.conf"), "[Service]\nEnvironment=A=1\n", 0o644)
	write("/etc/motd", "welcome to the node\n", 0o644)
	c := conformance.Case{Name: "verify", Want: conformance.State{
		Files:    []conformance.File{{Path: "/etc/app.conf", Content: "setting=1\n", Mode: 0o640, Owner: "owner:owner"}},
		Absent:   []string{"/etc/removed"},
		Users:    []conformance.User{{Name: "ops", Groups: []string{"docker"}, SSHKeys: []string{"ssh-ed25519 AAAAC3Nza ops@laptop"}}},
		Units:    []conformance.Unit{{Name: "app.service", Contents: "[Service]\nExecStart=/bin/true\n", DropIns: map[string]string{"10-env.conf": "[Service]\nEnvironment=A=1\n"}, Enabled: true, StartedAfter: "configured"}},
		Contains: []conformance.Contains{{Paths: []string{"/etc/issue", "/etc/motd"}, Text: "welcome"}},
		Log:      []string{"configured", "done"},
	}}
	n := conformance.Node{Root: root, Events: []string{"configured", "systemctl enable app.service", "systemctl start app.service", "done"}}
	return c, n
}

// TestVerify: Verify passes a node that meets its Case and names each way a
// node can differ, one broken at a time: the check behind every
// conformance suite fails when it should.
func TestVerify(t *testing.T) {
	c, n := verifyCase(t)
	if err := c.Verify(n); err != nil {
		t.Fatalf("a node that meets its Case: %v", err)
	}
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, c *conformance.Case, n *conformance.Node)
		want  string
	}{
		{"content", func(t *testing.T, _ *conformance.Case, n *conformance.Node) {
			mustWrite(t, n.Root, "/etc/app.conf", "setting=2\n")
		}, "/etc/app.conf holds"},
		{"mode", func(t *testing.T, _ *conformance.Case, n *conformance.Node) {
			mustChmod(t, n.Root, "/etc/app.conf", 0o644)
		}, "/etc/app.conf has mode 0644, want 0640"},
		{"owner", func(_ *testing.T, c *conformance.Case, _ *conformance.Node) {
			c.Want.Files[0].Owner = "ops:ops"
		}, "/etc/app.conf is owned by owner:owner, want ops:ops"},
		{"missing file", func(t *testing.T, _ *conformance.Case, n *conformance.Node) {
			mustRemove(t, n.Root, "/etc/app.conf")
		}, "/etc/app.conf: "},
		{"absent path exists", func(t *testing.T, _ *conformance.Case, n *conformance.Node) {
			mustWrite(t, n.Root, "/etc/removed", "")
		}, "/etc/removed exists, it must not"},
		{"missing user", func(_ *testing.T, c *conformance.Case, _ *conformance.Node) {
			c.Want.Users[0].Name = "dev"
		}, "user dev does not exist"},
		{"group membership", func(t *testing.T, _ *conformance.Case, n *conformance.Node) {
			mustWrite(t, n.Root, "/etc/group", "ops:x:4242:\ndocker:x:4243:\n")
		}, "ops is not a member of docker"},
		{"ssh key", func(t *testing.T, _ *conformance.Case, n *conformance.Node) {
			mustWrite(t, n.Root, "/home/ops/.ssh/authorized_keys", "# none\n")
		}, "ops's authorized keys lack"},
		{"unit contents", func(t *testing.T, _ *conformance.Case, n *conformance.Node) {
			mustWrite(t, n.Root, provisioning.UnitFile("app.service"), "[Service]\nExecStart=/bin/false\n")
		}, "unit app.service: file"},
		{"drop-in", func(t *testing.T, _ *conformance.Case, n *conformance.Node) {
			mustRemove(t, n.Root, provisioning.DropInFile("app.service", "10-env.conf"))
		}, "unit app.service: drop-in"},
		{"not enabled", func(_ *testing.T, _ *conformance.Case, n *conformance.Node) {
			n.Events = []string{"configured", "systemctl start app.service", "done"}
		}, "unit app.service is not enabled"},
		{"started before its line", func(_ *testing.T, _ *conformance.Case, n *conformance.Node) {
			n.Events = []string{"systemctl enable app.service", "systemctl start app.service", "configured", "done"}
		}, `unit app.service is not started after "configured"`},
		{"never started", func(_ *testing.T, _ *conformance.Case, n *conformance.Node) {
			n.Events = []string{"configured", "systemctl enable app.service", "done"}
		}, `unit app.service is not started after "configured"`},
		{"log", func(_ *testing.T, _ *conformance.Case, n *conformance.Node) {
			n.Events = append(n.Events, "extra")
		}, "the commands logged"},
		{"exit code", func(_ *testing.T, _ *conformance.Case, n *conformance.Node) {
			n.ExitCode = 3
		}, "the commands ended with exit code 3, want 0"},
		{"text nowhere", func(t *testing.T, _ *conformance.Case, n *conformance.Node) {
			mustWrite(t, n.Root, "/etc/motd", "hello\n")
		}, `contains "welcome"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, n := verifyCase(t)
			tc.spoil(t, &c, &n)
			err := c.Verify(n)
			if err == nil {
				t.Fatal("Verify passed a node that differs")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify: %v\nwant it to say %q", err, tc.want)
			}
		})
	}
}

func mustWrite(t *testing.T, root, p, content string) {
	t.Helper()
	full := filepath.Join(root, p)
	fi, err := os.Stat(full)
	mode := os.FileMode(0o644)
	if err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.WriteFile(full, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func mustChmod(t *testing.T, root, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(root, p), mode); err != nil {
		t.Fatal(err)
	}
}

func mustRemove(t *testing.T, root, p string) {
	t.Helper()
	if err := os.Remove(filepath.Join(root, p)); err != nil {
		t.Fatal(err)
	}
}
