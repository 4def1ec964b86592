package makefile

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// testFuncs calls each with the directory (relative to root) and
// declaration of every top-level function in a _test.go file under root;
// with buildOnly, only in files the default build context compiles.
func testFuncs(t *testing.T, root string, buildOnly bool, each func(dir string, fn *ast.FuncDecl)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor" || d.Name() == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		if buildOnly {
			if ok, err := build.Default.MatchFile(filepath.Dir(path), d.Name()); err != nil || !ok {
				return err
			}
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil {
				each(rel, fn)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fuzzersIn returns "dir FuzzName" for every fuzz target under root, read
// with go/parser rather than the script's pattern: a function named Fuzz*
// in a _test.go file whose one parameter is *testing.F.
func fuzzersIn(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	testFuncs(t, root, false, func(dir string, fn *ast.FuncDecl) {
		if !strings.HasPrefix(fn.Name.Name, "Fuzz") || len(fn.Type.Params.List) != 1 {
			return
		}
		star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr)
		if !ok {
			return
		}
		if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "F" {
			found = append(found, dir+" "+fn.Name.Name)
		}
	})
	sort.Strings(found)
	return found
}

// missing returns the entries of want that got lacks.
func missing(want, got []string) []string {
	have := map[string]bool{}
	for _, g := range got {
		have[g] = true
	}
	var out []string
	for _, w := range want {
		if !have[w] {
			out = append(out, w)
		}
	}
	return out
}

func scriptList(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(root, "hack", "fuzz.sh"), "list")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/fuzz.sh list: %v\n%s", err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestFuzzTargetsRunEveryFuzzer is issue 25's check: `make fuzz` and
// `make fuzz-ci` fuzz every fuzz function in the repository. Three of
// twelve were in no target before; the list now comes from the source
// (hack/fuzz.sh), and this test holds the script to go/parser.
func TestFuzzTargetsRunEveryFuzzer(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is not installed; .ci/run installs it")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	want := fuzzersIn(t, root)
	if len(want) < 12 {
		t.Fatalf("go/parser found %d fuzzers, the repository has at least 12: %v", len(want), want)
	}
	listed := scriptList(t, root)
	if m := missing(want, listed); len(m) > 0 {
		t.Errorf("hack/fuzz.sh list misses %v", m)
	}
	if extra := missing(listed, want); len(extra) > 0 {
		t.Errorf("hack/fuzz.sh list names %v, which go/parser does not find", extra)
	}
	for _, target := range []string{"fuzz", "fuzz-ci"} {
		plan := makePlan(t, root, target)
		if !strings.Contains(plan, "hack/fuzz.sh run ") {
			t.Errorf("make -n %s does not run hack/fuzz.sh:\n%s", target, plan)
		}
		// A rule file adding its own fuzzer as a prerequisite would fuzz it
		// twice, once outside the script's budget.
		if strings.Contains(plan, "go test") {
			t.Errorf("make -n %s runs go test besides hack/fuzz.sh:\n%s", target, plan)
		}
	}
}

// TestFuzzListCatchesAMissingFuzzer: the comparison above reports a fuzzer
// the list lacks, so the test can fail.
func TestFuzzListCatchesAMissingFuzzer(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package a\n\nimport \"testing\"\n\nfunc FuzzA(f *testing.F) {}\n\nfunc FuzzB(\n\tf *testing.F,\n) {\n}\n\nfunc FuzzyHelper(t *testing.T) {}\n"
	if err := os.WriteFile(filepath.Join(dir, "a", "a_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	want := fuzzersIn(t, dir)
	if strings.Join(want, ",") != "a FuzzA,a FuzzB" {
		t.Fatalf("go/parser reading found %v", want)
	}
	if m := missing(want, []string{"a FuzzA"}); strings.Join(m, ",") != "a FuzzB" {
		t.Fatalf("missing reported %v, want [a FuzzB]", m)
	}
}

// benchPackagesIn returns "./dir/" for every package under root with a
// benchmark in a file the default build context compiles (test/e2e's are
// behind the e2e tag and need real clusters).
func benchPackagesIn(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	testFuncs(t, root, true, func(dir string, fn *ast.FuncDecl) {
		if strings.HasPrefix(fn.Name.Name, "Benchmark") {
			seen["./"+dir+"/"] = true
		}
	})
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TestBenchSmokeRunsEveryBenchmark: `make bench-smoke` runs every package
// that has a benchmark, once each, at the small size.
func TestBenchSmokeRunsEveryBenchmark(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	want := benchPackagesIn(t, root)
	if len(want) < 10 {
		t.Fatalf("go/parser found benchmarks in %d packages, the repository has more: %v", len(want), want)
	}
	plan := makePlan(t, root, "bench-smoke")
	for _, flag := range []string{"-bench .", "-benchtime 1x", "-short", "-run '^$'"} {
		if !strings.Contains(plan, flag) {
			t.Errorf("make -n bench-smoke lacks %s:\n%s", flag, plan)
		}
	}
	if m := missing(want, strings.Fields(plan)); len(m) > 0 {
		t.Errorf("make -n bench-smoke leaves out %v:\n%s", m, plan)
	}
	if strings.Contains(plan, "test/e2e") {
		t.Errorf("make -n bench-smoke runs test/e2e, which needs real clusters:\n%s", plan)
	}
}
