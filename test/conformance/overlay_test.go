package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// shared is the Debian root unpacked once per test binary: each Ignition
// and script node is an overlay of its own on top of it, so a node costs a
// mount instead of unpacking the whole root again (most of the suite's
// system time when every node unpacked its own).
var shared struct {
	once sync.Once
	dir  string
}

// unpackArgs are the tar arguments that unpack the root into dir, less
// what no node reads (Python, documentation, locales).
func unpackArgs(tarball, dir string) []string {
	return []string{"--numeric-owner", "-xzpf", tarball, "-C", dir,
		"--exclude=./usr/lib/python3*", "--exclude=./usr/share/doc", "--exclude=./usr/share/man",
		"--exclude=./usr/share/locale", "--exclude=./usr/share/i18n", "--exclude=./usr/lib/locale"}
}

// overlayRoot is a new root for t over the shared unpacked root, unmounted
// when t ends, or "" where overlayfs cannot be mounted (the caller then
// unpacks a root of its own).
func overlayRoot(t *testing.T, tarball string) string {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "conformance-root-")
		if err != nil {
			return
		}
		if out, err := exec.Command("tar", unpackArgs(tarball, dir)...).CombinedOutput(); err != nil {
			t.Logf("unpack the shared root: %v\n%s", err, out)
			_ = os.RemoveAll(dir)
			return
		}
		_ = os.Chmod(dir, 0o755)
		shared.dir = dir
	})
	if shared.dir == "" {
		return ""
	}
	base := t.TempDir()
	upper, work, root := filepath.Join(base, "upper"), filepath.Join(base, "work"), filepath.Join(base, "root")
	for _, d := range []string{upper, work, root} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := "lowerdir=" + shared.dir + ",upperdir=" + upper + ",workdir=" + work
	if out, err := exec.Command("mount", "-t", "overlay", "overlay", "-o", opts, root).CombinedOutput(); err != nil {
		t.Logf("overlayfs not available (%v: %s): unpacking a root of its own", err, out)
		return ""
	}
	// Registered after TempDir, so it runs before the directory is removed.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", root).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", root, err, out)
		}
	})
	// Ignition writes ssh keys as the user, who must reach the home
	// directory through the test's temporary directories.
	for _, d := range []string{root, base, filepath.Dir(base)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// removeSharedRoot removes the shared root once every test has ended.
func removeSharedRoot() {
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
}
