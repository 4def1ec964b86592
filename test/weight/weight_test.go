// Package weight measures what importing nodeboot's renderers costs a
// consumer: one tiny program per renderer (testdata/cloudinit,
// testdata/ignition, testdata/script) is built with the real go command, their sizes are logged, and the Ignition
// one is checked for what it must not link. A second bootstrap provider
// (k3s, RKE2) pays this weight in its manager binary, so it is guarded like
// an API.
package weight

import (
	"bufio"
	"bytes"
	"encoding/json"
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

// ceilings are the measured sizes (go1.26, linux/amd64) with about 15%
// headroom, so a new dependency that adds a large share of a renderer's
// weight fails here rather than in a consumer's release notes. Measured
// on 1 December 2026: cloudinit 4,243,152 bytes; ignition 13,158,028 bytes
// (14,092,324 before it stopped importing Butane's all-variant registry);
// script 3,017,395 bytes.
var ceilings = map[string]int64{
	"cloudinit": 4_900_000,
	"ignition":  15_150_000,
	"script":    3_470_000,
}

// butaneVariant matches a Butane variant package, e.g.
// github.com/coreos/butane/config/flatcar/v1_1; symbolVariant finds one in a
// symbol name, anywhere (methods, closures, generic instantiations, itabs).
var (
	butaneVariant = regexp.MustCompile(`^github\.com/coreos/butane/config/([a-z0-9]+)/(v[0-9a-z_]+)$`)
	symbolVariant = regexp.MustCompile(`github\.com/coreos/butane/config/([a-z0-9]+)/(v[0-9a-z_]+)\.`)
)

// acceptedVariant reports whether the ignition package accepts a Butane
// variant package: flatcar and fcos, stable versions only (ignition refuses
// experimental ones before translating).
func acceptedVariant(variant, version string) bool {
	return (variant == "flatcar" || variant == "fcos") && !strings.HasSuffix(version, "_exp")
}

// upstreamTesting are the packages outside nodeboot allowed to import
// package testing into a consumer, each with the reason it cannot be
// avoided. Butane's base/util ships its test helpers (test.go:
// VerifyTranslations, VerifyReport) in the non-test package every variant
// imports, with testify/assert; no Butane translation links without it. It
// costs the ignition consumer about 0.42 MB (measured with test.go emptied
// in a copy of Butane v0.26.0).
var upstreamTesting = map[string]string{
	"github.com/coreos/butane/base/util": "Butane's test helpers live in its non-test util package",
}

// testingPackage reports whether p exists only for tests.
func testingPackage(p string) bool {
	return p == "testing" || strings.HasPrefix(p, "testing/") || strings.HasPrefix(p, "github.com/stretchr/testify/")
}

type pkg struct {
	ImportPath string
	Imports    []string
}

// linkProblems returns what the ignition consumer must not link: a Butane
// variant ignition does not accept, found in the import graph or among the
// binary's symbols (what the linker kept), or an import of a test-only
// package by a package not in upstreamTesting.
func linkProblems(pkgs []pkg, symbols []string) []string {
	var out []string
	for _, p := range pkgs {
		if m := butaneVariant.FindStringSubmatch(p.ImportPath); m != nil && !acceptedVariant(m[1], m[2]) {
			out = append(out, fmt.Sprintf("imports Butane variant %s %s", m[1], m[2]))
		}
		if testingPackage(p.ImportPath) {
			continue
		}
		for _, imp := range p.Imports {
			if testingPackage(imp) && upstreamTesting[p.ImportPath] == "" {
				out = append(out, fmt.Sprintf("%s imports %s", p.ImportPath, imp))
			}
		}
	}
	seen := map[string]bool{}
	for _, s := range symbols {
		for _, m := range symbolVariant.FindAllStringSubmatch(s, -1) {
			if acceptedVariant(m[1], m[2]) || seen[m[1]+"/"+m[2]] {
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
	names := slices.Sorted(maps.Keys(ceilings))
	args := []string{"build", "-buildvcs=false", "-o", bin + string(filepath.Separator)}
	for _, name := range names {
		args = append(args, "./testdata/"+name)
	}
	goCmd(t, args...)

	for _, name := range names {
		fi, err := os.Stat(filepath.Join(bin, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("consumer binary %s: %d bytes (%.2f MB; ceiling %d)", name, fi.Size(), float64(fi.Size())/1e6, ceilings[name])
		if fi.Size() > ceilings[name] {
			t.Errorf("%s consumer is %d bytes, above the ceiling of %d", name, fi.Size(), ceilings[name])
		}
	}

	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(goCmd(t, "list", "-deps", "-json=ImportPath,Imports", "./testdata/ignition")))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	var symbols []string
	sc := bufio.NewScanner(bytes.NewReader(goCmd(t, "tool", "nm", filepath.Join(bin, "ignition"))))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 3 {
			symbols = append(symbols, f[len(f)-1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// Guards against a vacuous pass: the accepted variants must be there.
	if !slices.ContainsFunc(symbols, func(s string) bool {
		return strings.HasPrefix(s, "github.com/coreos/butane/config/flatcar/v1_1.")
	}) {
		t.Fatal("no symbol of Butane's flatcar v1_1 in the ignition consumer: the symbol check would see nothing")
	}
	for _, p := range linkProblems(pkgs, symbols) {
		t.Errorf("ignition consumer %s", p)
	}
	for _, p := range pkgs {
		if slices.Contains(p.Imports, "testing") && upstreamTesting[p.ImportPath] != "" {
			t.Logf("package testing is linked through %s: %s", p.ImportPath, upstreamTesting[p.ImportPath])
		}
	}

	// The trimmed build still translates Butane: an accepted variant renders,
	// one nodeboot does not accept is refused.
	run := func(arg string) error {
		cmd := exec.Command(filepath.Join(bin, "ignition"), arg)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	}
	if err := run("variant: flatcar\nversion: 1.1.0\nstorage:\n  files:\n  - path: /etc/weight\n    contents:\n      inline: x\n"); err != nil {
		t.Errorf("ignition consumer with a flatcar 1.1.0 Butane config: %v", err)
	}
	if err := run("variant: openshift\nversion: 4.14.0\n"); err == nil {
		t.Error("ignition consumer accepted an openshift Butane config")
	}
}

// TestLinkProblemsCatchViolations proves the checks above can fail.
func TestLinkProblemsCatchViolations(t *testing.T) {
	bad := []pkg{
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
	if got := linkProblems(bad, symbols); len(got) != 6 {
		t.Errorf("want 6 problems, got %d: %q", len(got), got)
	}
	good := []pkg{
		{ImportPath: "github.com/coreos/butane/config/flatcar/v1_1"},
		{ImportPath: "github.com/coreos/butane/config/fcos/v1_6"},
		{ImportPath: "github.com/coreos/butane/base/util", Imports: []string{"testing", "github.com/stretchr/testify/assert"}},
		{ImportPath: "github.com/stretchr/testify/assert", Imports: []string{"testing"}},
	}
	if got := linkProblems(good, []string{"github.com/coreos/butane/config/fcos/v1_6.ToIgn3_5Bytes", "runtime.main"}); len(got) != 0 {
		t.Errorf("want no problems, got %q", got)
	}
}
