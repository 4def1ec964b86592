// Package weight measures what importing nodeboot's renderers costs a
// consumer: one tiny program per renderer (testdata/cloudinit,
// testdata/ignition, testdata/script), and one for a provider that also
// takes Butane additional config (testdata/ignitionbutane), is built with the
// real go command, their sizes are logged, and each is checked for what it
// must not link. A second bootstrap provider (k3s, RKE2) pays this weight in
// its manager binary, so it is guarded like an API.
package weight

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// consumer is one program under testdata.
type consumer struct {
	// ceiling is the measured size (go1.26, linux/amd64) with about 15%
	// headroom, so a new dependency that adds a large share of a
	// renderer's weight fails here rather than in a consumer's release
	// notes.
	ceiling int64
	// butane: the program imports ignition/butane, so it links the Butane
	// variants ignition accepts and, through Butane's base/util, package
	// testing. Every other consumer links neither.
	butane bool
}

// consumers, measured on 1 December 2026: cloudinit 4,243,152 bytes;
// script 3,017,395 bytes; and on 3 December: ignition 11,379,278 bytes
// (13,158,028 while package ignition imported Butane, 14,092,324 before it
// stopped importing Butane's all-variant registry); ignitionbutane
// 13,363,164 bytes.
var consumers = map[string]consumer{
	"cloudinit":      {ceiling: 4_900_000},
	"ignition":       {ceiling: 13_100_000},
	"ignitionbutane": {ceiling: 15_400_000, butane: true},
	"script":         {ceiling: 3_470_000},
}

// butaneVariant matches a Butane variant package, e.g.
// github.com/coreos/butane/config/flatcar/v1_1; symbolVariant finds one in a
// symbol name, anywhere (methods, closures, generic instantiations, itabs).
var (
	butaneVariant = regexp.MustCompile(`^github\.com/coreos/butane/config/([a-z0-9]+)/(v[0-9a-z_]+)$`)
	symbolVariant = regexp.MustCompile(`github\.com/coreos/butane/config/([a-z0-9]+)/(v[0-9a-z_]+)\.`)
)

const butanePrefix = "github.com/coreos/butane/"

// acceptedVariant reports whether ignition/butane translates a Butane
// variant package: flatcar and fcos, stable versions only (ignition refuses
// experimental ones before translating).
func acceptedVariant(variant, version string) bool {
	return (variant == "flatcar" || variant == "fcos") && !strings.HasSuffix(version, "_exp")
}

// testingPackage reports whether p exists only for tests.
func testingPackage(p string) bool {
	return p == "testing" || strings.HasPrefix(p, "testing/") || strings.HasPrefix(p, "github.com/stretchr/testify/")
}

type pkg struct {
	ImportPath string
	Imports    []string
}

// linkProblems returns what a consumer must not link, from its import graph
// and its binary's symbols (what the linker kept). A consumer without Butane
// links no Butane package and no test-only package at all. A consumer with
// Butane links no Butane variant ignition/butane does not accept; package
// testing and testify it may link only through Butane itself, whose
// base/util package ships its test helpers (test.go: VerifyTranslations,
// VerifyReport) in the non-test package every variant imports: that is
// part of what opting into Butane costs, and nothing of nodeboot's may add
// to it.
func linkProblems(pkgs []pkg, symbols []string, butane bool) []string {
	var out []string
	for _, p := range pkgs {
		if !butane && strings.HasPrefix(p.ImportPath, butanePrefix) {
			out = append(out, fmt.Sprintf("imports Butane package %s", p.ImportPath))
		}
		if m := butaneVariant.FindStringSubmatch(p.ImportPath); butane && m != nil && !acceptedVariant(m[1], m[2]) {
			out = append(out, fmt.Sprintf("imports Butane variant %s %s", m[1], m[2]))
		}
		if testingPackage(p.ImportPath) {
			continue
		}
		for _, imp := range p.Imports {
			if testingPackage(imp) && !(butane && strings.HasPrefix(p.ImportPath, butanePrefix)) {
				out = append(out, fmt.Sprintf("%s imports %s", p.ImportPath, imp))
			}
		}
	}
	seen := map[string]bool{}
	linked := false
	for _, s := range symbols {
		if !butane && !linked && strings.Contains(s, butanePrefix) {
			linked = true
			out = append(out, fmt.Sprintf("links Butane (symbol %s)", s))
		}
		for _, m := range symbolVariant.FindAllStringSubmatch(s, -1) {
			if !butane || acceptedVariant(m[1], m[2]) || seen[m[1]+"/"+m[2]] {
				continue
			}
			seen[m[1]+"/"+m[2]] = true
			out = append(out, fmt.Sprintf("links Butane variant %s %s", m[1], m[2]))
		}
	}
	return out
}

func goCmd(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func TestConsumerWeight(t *testing.T) {
	bin := t.TempDir()
	// One go build links every program in parallel. -buildvcs=false keeps
	// the size independent of the checkout (a VCS stamp is build info that
	// varies with git state).
	names := slices.Sorted(maps.Keys(consumers))
	args := []string{"build", "-buildvcs=false", "-o", bin + string(filepath.Separator)}
	for _, name := range names {
		args = append(args, "./testdata/"+name)
	}
	goCmd(t, args...)

	for _, name := range names {
		c := consumers[name]
		fi, err := os.Stat(filepath.Join(bin, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("consumer binary %s: %d bytes (%.2f MB; ceiling %d)", name, fi.Size(), float64(fi.Size())/1e6, c.ceiling)
		if fi.Size() > c.ceiling {
			t.Errorf("%s consumer is %d bytes, above the ceiling of %d", name, fi.Size(), c.ceiling)
		}
		symbols := binarySymbols(t, filepath.Join(bin, name))
		if c.butane && !slices.ContainsFunc(symbols, func(s string) bool {
			return strings.HasPrefix(s, "github.com/coreos/butane/config/flatcar/v1_1.")
		}) {
			// Guards against a vacuous pass: the accepted variants must be there.
			t.Errorf("no symbol of Butane's flatcar v1_1 in the %s consumer: the symbol check would see nothing", name)
		}
		for _, p := range linkProblems(listDeps(t, "./testdata/"+name), symbols, c.butane) {
			t.Errorf("%s consumer %s", name, p)
		}
	}

	run := func(name, arg string) error {
		cmd := exec.Command(filepath.Join(bin, name), arg)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	}
	const flatcar = "variant: flatcar\nversion: 1.1.0\nstorage:\n  files:\n  - path: /etc/weight\n    contents:\n      inline: x\n"
	const ignitionJSON = `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/weight","contents":{"source":"data:,x"}}]}}`
	// The trimmed build still translates Butane: an accepted variant renders,
	// one nodeboot does not accept is refused.
	if err := run("ignitionbutane", flatcar); err != nil {
		t.Errorf("ignitionbutane consumer with a flatcar 1.1.0 Butane config: %v", err)
	}
	if err := run("ignitionbutane", "variant: openshift\nversion: 4.14.0\n"); err == nil {
		t.Error("ignitionbutane consumer accepted an openshift Butane config")
	}
	// Without ignition/butane, Ignition JSON renders and Butane is the
	// typed error (the program exits 3 on ignition.ErrButaneNotLinked).
	if err := run("ignition", ignitionJSON); err != nil {
		t.Errorf("ignition consumer with an Ignition JSON config: %v", err)
	}
	var exit *exec.ExitError
	if err := run("ignition", flatcar); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("ignition consumer with a Butane config: %v, want exit status 3 (ignition.ErrButaneNotLinked)", err)
	}
}

// listDeps returns the import graph of a consumer.
func listDeps(t *testing.T, dir string) []pkg {
	t.Helper()
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(goCmd(t, "list", "-deps", "-json=ImportPath,Imports", dir)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// binarySymbols returns the symbol names of a binary.
func binarySymbols(t *testing.T, path string) []string {
	t.Helper()
	var symbols []string
	sc := bufio.NewScanner(bytes.NewReader(goCmd(t, "tool", "nm", path)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 3 {
			symbols = append(symbols, f[len(f)-1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return symbols
}

// TestLinkProblemsCatchViolations proves the checks above can fail.
func TestLinkProblemsCatchViolations(t *testing.T) {
	withButane := []pkg{
		{ImportPath: "github.com/coreos/butane/config/openshift/v4_14"},
		{ImportPath: "github.com/coreos/butane/config/flatcar/v1_2_exp"},
		{ImportPath: "github.com/nodeboot/nodeboot/ignition", Imports: []string{"testing"}},
		{ImportPath: "example.com/other", Imports: []string{"github.com/stretchr/testify/assert"}},
	}
	symbols := []string{
		"github.com/coreos/butane/config/r4e/v1_1.ToIgn3_4Bytes",
		"github.com/coreos/butane/config/r4e/v1_1.init",
		"github.com/coreos/butane/config/fiot/v1_0.(*Config).ToIgn3_4Unvalidated",
	}
	if got := linkProblems(withButane, symbols, true); len(got) != 6 {
		t.Errorf("with Butane: want 6 problems, got %d: %q", len(got), got)
	}
	goodButane := []pkg{
		{ImportPath: "github.com/coreos/butane/config/flatcar/v1_1"},
		{ImportPath: "github.com/coreos/butane/config/fcos/v1_6"},
		{ImportPath: "github.com/coreos/butane/base/util", Imports: []string{"testing", "github.com/stretchr/testify/assert"}},
		{ImportPath: "github.com/stretchr/testify/assert", Imports: []string{"testing"}},
	}
	goodSymbols := []string{"github.com/coreos/butane/config/fcos/v1_6.ToIgn3_5Bytes", "runtime.main"}
	if got := linkProblems(goodButane, goodSymbols, true); len(got) != 0 {
		t.Errorf("with Butane: want no problems, got %q", got)
	}
	// Without Butane, what a Butane consumer may link is a problem: each
	// Butane package (3), each import of a test-only package by one that
	// is not test-only itself (2, Butane's included), and Butane in the
	// binary (reported once).
	if got := linkProblems(goodButane, goodSymbols, false); len(got) != 6 {
		t.Errorf("without Butane: want 6 problems, got %d: %q", len(got), got)
	}
	if got := linkProblems([]pkg{{ImportPath: "github.com/nodeboot/nodeboot/ignition", Imports: []string{"fmt"}}}, []string{"runtime.main"}, false); len(got) != 0 {
		t.Errorf("without Butane: want no problems, got %q", got)
	}
}
