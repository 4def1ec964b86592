// Package testenv locates what tests check nodeboot against: the reference
// vectors and the real third-party tools in ../shared, and envtest's binaries.
// A test that needs one of them fails when it is missing — it never skips —
// because a skipped compatibility test proves nothing. `go test -short` is the
// one way to leave the slow tool-driven tests out during development.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// ModuleRoot is the repository root.
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// SharedDir is ../shared beside the repository, or $NODEBOOT_SHARED.
func SharedDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("NODEBOOT_SHARED")
	if dir == "" {
		dir = filepath.Join(ModuleRoot(), "..", "shared")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("shared directory with vectors and tools not found (set NODEBOOT_SHARED): %v", err)
	}
	return dir
}

// VectorsDir is the CABPK reference vector directory.
func VectorsDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(SharedDir(t), "cabpk-vectors")
}

// Vectors returns the vector directories whose names start with prefix.
func Vectors(t testing.TB, prefix string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(VectorsDir(t), prefix+"*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no vectors %s* under %s", prefix, VectorsDir(t))
	}
	return dirs
}

// Tool returns the path of a tool in ../shared/tools. Tools are slow, so
// -short skips the calling test; otherwise a missing tool fails it.
func Tool(t testing.TB, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: not running %s", name)
	}
	p := filepath.Join(SharedDir(t), "tools", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("tool %s not found: %v", name, err)
	}
	return p
}

// RequireRoot fails the test when not root: the apply tools chroot and unshare.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("this test runs real cloud-init/Ignition in a chroot and needs root")
	}
}

// KubebuilderAssets returns the directory with kube-apiserver, etcd and
// kubectl: $KUBEBUILDER_ASSETS, else what ../shared/tools/envtest-assets.sh
// prints (it builds them once and caches them). It sets KUBEBUILDER_ASSETS.
func KubebuilderAssets(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	script := filepath.Join(SharedDir(t), "tools", "envtest-assets.sh")
	out, err := exec.Command("bash", "-c", script+" | tail -1").Output()
	if err != nil {
		t.Fatalf("envtest-assets.sh: %v", err)
	}
	dir := string(out)
	for len(dir) > 0 && (dir[len(dir)-1] == '\n' || dir[len(dir)-1] == ' ') {
		dir = dir[:len(dir)-1]
	}
	if err := os.Setenv("KUBEBUILDER_ASSETS", dir); err != nil {
		t.Fatal(err)
	}
	return dir
}
