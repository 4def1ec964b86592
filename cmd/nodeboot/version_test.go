package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/test/testenv"
)

func TestVersionCommand(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		var out, errb bytes.Buffer
		if code := run([]string{arg}, nil, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", arg, code, errb.String())
		}
		line := strings.TrimSpace(out.String())
		if !strings.HasPrefix(line, "nodeboot ") || !strings.Contains(line, runtime.Version()) || strings.Count(out.String(), "\n") != 1 {
			t.Errorf("%s printed %q", arg, out.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"version", "extra"}, nil, &out, &errb); code != 2 {
		t.Errorf("version extra: exit %d, want 2", code)
	}
}

// TestVersionBuilt: a binary built from the repository reports the commit
// it was built from (the toolchain's VCS stamp) and its module version.
func TestVersionBuilt(t *testing.T) {
	root := testenv.ModuleRoot()
	bin := filepath.Join(t.TempDir(), "nodeboot")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/nodeboot")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rev, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("nodeboot version: %v", err)
	}
	want := regexp.MustCompile(`^nodeboot v\S+ \(commit ` + strings.TrimSpace(string(rev)) + `(-dirty)?, go\S+, ` + runtime.GOOS + "/" + runtime.GOARCH + `\)\n$`)
	if !want.Match(out) {
		t.Errorf("nodeboot version = %q, want %s", out, want)
	}
}
