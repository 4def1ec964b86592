// Package weight measures what importing nodeboot's renderers costs a
// consumer: one tiny program per renderer (testdata/cloudinit,
// testdata/ignition for native Ignition v3 alone, testdata/ignitioncabpk
// for CABPK's Ignition 2.3 alone, testdata/script), one with both Ignition
// dialects (testdata/ignitionboth), and one for a provider that also
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
	// without lists import path prefixes the program must link nothing of,
	// neither as a package nor as a symbol: a program that imports one
	// Ignition dialect links nothing of the other.
	without []string
}

var (
	// legacyDialect is what only CABPK's Ignition 2.3 (ignition/legacy)
	// links: the Container Linux Config transpiler and Flatcar's Ignition 2.x.
	legacyDialect = []string{"github.com/nodeboot/nodeboot/provisioning/ignition/legacy", "github.com/flatcar/"}
	// nativeDialect is what only native Ignition v3 (ignition/v3) links.
	nativeDialect = []string{"github.com/nodeboot/nodeboot/provisioning/ignition/v3", "github.com/coreos/ignition/"}
)

// consumers, measured on 1 December 2026: cloudinit 4,243,152 bytes;
// script 3,017,395 bytes; and on 3 December: ignition 11,379,278 bytes
// while it linked both dialects (13,158,028 while package ignition imported
// Butane, 14,092,324 before it stopped importing Butane's all-variant
// registry); ignitionbutane 13,363,164 bytes. Since the dialects are
// packages of their own (3 December): ignition, native v3 only, 8,558,835
// bytes; ignitioncabpk, Ignition 2.3 only, 9,547,669; ignitionboth
// 11,396,126 (the legacy dialect adds 2,837,291 bytes to a native
// consumer); ignitionbutane, native v3 with Butane, 12,446,558.
var consumers = map[string]consumer{
	"cloudinit":      {ceiling: 4_900_000},
	"ignition":       {ceiling: 9_850_000, without: legacyDialect},
	"ignitionboth":   {ceiling: 13_100_000},
	"ignitionbutane": {ceiling: 14_300_000, butane: true, without: legacyDialect},
	"ignitioncabpk":  {ceiling: 11_000_000, without: nativeDialect},
	"script":         {ceiling: 3_470_000},
}

// withoutProblems returns what a consumer links, as a package or a symbol,
// under the prefixes it must link nothing of.
func withoutProblems(pkgs []pkg, symbols, without []string) []string {
	var out []string
	for _, prefix := range without {
		for _, p := range pkgs {
			if strings.HasPrefix(p.ImportPath, prefix) {
				out = append(out, fmt.Sprintf("imports %s", p.ImportPath))
				break
			}
		}
		for _, s := range symbols {
			if strings.Contains(s, prefix) {
				out = append(out, fmt.Sprintf("links %s (symbol %s)", prefix, s))
				break
			}
		}
	}
	return out
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
		deps := listDeps(t, "./testdata/"+name)
		for _, p := range linkProblems(deps, symbols, c.butane) {
			t.Errorf("%s consumer %s", name, p)
		}
		for _, p := range withoutProblems(deps, symbols, c.without) {
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
	// Without ignition/legacy, CABPK's dialect is an unknown version.
	if err := run("ignition", "cabpk"); !errors.As(err, &exit) || exit.ExitCode() != 4 {
		t.Errorf("ignition consumer asked for CABPK's dialect: %v, want exit status 4 (ignition.ErrUnknownVersion)", err)
	}
	// The single-dialect programs render their dialect.
	const clc = "storage:\n  files:\n  - path: /etc/weight\n    filesystem: root\n    mode: 0644\n    contents:\n      inline: x\n"
	if err := run("ignitioncabpk", clc); err != nil {
		t.Errorf("ignitioncabpk consumer with a Container Linux Config: %v", err)
	}
	if err := run("ignitionboth", ""); err != nil {
		t.Errorf("ignitionboth consumer: %v", err)
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
		{ImportPath: "github.com/nodeboot/nodeboot/provisioning/ignition", Imports: []string{"testing"}},
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
	if got := linkProblems([]pkg{{ImportPath: "github.com/nodeboot/nodeboot/provisioning/ignition", Imports: []string{"fmt"}}}, []string{"runtime.main"}, false); len(got) != 0 {
		t.Errorf("without Butane: want no problems, got %q", got)
	}
	// One dialect links nothing of the other: a package and a symbol each
	// count once per prefix.
	both := []pkg{{ImportPath: "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"}, {ImportPath: "github.com/flatcar/ignition/config/v2_3/types"}, {ImportPath: "github.com/nodeboot/nodeboot/provisioning/ignition/v3"}}
	if got := withoutProblems(both, []string{"github.com/flatcar/container-linux-config-transpiler/config.Convert"}, legacyDialect); len(got) != 3 {
		t.Errorf("native only: want 3 problems, got %d: %q", len(got), got)
	}
	if got := withoutProblems(both[2:], []string{"github.com/coreos/vcontext/report.Report.String"}, legacyDialect); len(got) != 0 {
		t.Errorf("native only: want no problems, got %q", got)
	}
}
