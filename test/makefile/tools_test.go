// Package makefile checks what make would do on a machine whose tool caches
// are empty: every cached tool the plan runs must be built first.
package makefile

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// unbuiltTools returns the binaries under toolsDir that plan runs before
// any line builds them (a `go install`/`go build` naming their directory).
func unbuiltTools(plan, toolsDir string) []string {
	built := map[string]bool{}
	var missing []string
	binary := regexp.MustCompile(regexp.QuoteMeta(toolsDir) + `/[^ ;'"]+`)
	for _, line := range strings.Split(plan, "\n") {
		if strings.Contains(line, "go install") || strings.Contains(line, "go build") {
			for _, p := range binary.FindAllString(line, -1) {
				built[strings.TrimSuffix(p, "/")] = true
			}
			continue
		}
		for _, p := range binary.FindAllString(line, -1) {
			if !built[filepath.Dir(p)] && !built[p] {
				missing = append(missing, p)
			}
		}
	}
	return missing
}

func makePlan(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"-n", "--no-print-directory"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MAKEFLAGS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestLintBuildsItsTools is issue 21's regression test: on a fresh machine
// `make lint` ran $(TOOLS_DIR)/golangci-lint-*/golangci-lint without
// building it, because hack/lint.mk was read before hack/tools.mk.
func TestLintBuildsItsTools(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is not installed; .ci/run installs it")
	}
	empty := t.TempDir()
	for _, target := range []string{"lint", "golangci-lint", "golangci-lint-install"} {
		plan := makePlan(t, "../..", target, "TOOLS_DIR="+empty)
		if !strings.Contains(plan, empty+"/") {
			t.Fatalf("make -n %s names no tool under TOOLS_DIR; the check would prove nothing:\n%s", target, plan)
		}
		if m := unbuiltTools(plan, empty); len(m) > 0 {
			t.Errorf("make -n %s TOOLS_DIR=<empty> runs %v without building it first:\n%s", target, m, plan)
		}
	}
}

// TestUnbuiltToolsCatchesIncludeOrder runs the check on the shape that
// broke CI: a rule file that uses a tool path read before the file that
// defines it.
func TestUnbuiltToolsCatchesIncludeOrder(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"Makefile": "include a-lint.mk\ninclude b-tools.mk\n",
		"a-lint.mk": "ifneq ($(findstring /,$(LINTER)),)\n$(LINTER):\n\tGOBIN=$(dir $@) go install example.com/linter@v1\nendif\n" +
			"lint: $(LINTER)\n\t$(LINTER) run\n",
		"b-tools.mk": "TOOLS_DIR ?= /nonexistent\nLINTER ?= $(TOOLS_DIR)/linter-v1/linter\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	empty := t.TempDir()
	plan := makePlan(t, dir, "lint", "TOOLS_DIR="+empty)
	if m := unbuiltTools(plan, empty); len(m) == 0 {
		t.Fatalf("the check missed a tool run before it is built:\n%s", plan)
	}
	// The same files in the right order pass.
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("include b-tools.mk\ninclude a-lint.mk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan = makePlan(t, dir, "lint", "TOOLS_DIR="+empty)
	if m := unbuiltTools(plan, empty); len(m) > 0 {
		t.Fatalf("the check flagged %v in a plan that builds it first:\n%s", m, plan)
	}
}
