// Package test holds repository-wide checks: the import rules DESIGN.md sets
// between nodeboot's packages.
package test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/test/testenv"
)

const module = "github.com/nodeboot/nodeboot"

// library is the module of the Plan and the provisioners, a module of its
// own in provisioning/ (DESIGN.md: providers import it without moving their
// pins); everything under it is the library.
const library = module + "/provisioning"

// rule forbids packages under `pkg` from depending, directly or not, on any
// import path with one of the `forbidden` prefixes.
type rule struct {
	pkg       string
	forbidden []string
	why       string
	// direct checks only the package's own imports, for rules about what a
	// package may name rather than what it may pull in.
	direct bool
	// exact applies the rule to pkg alone, not to the packages under it.
	exact bool
}

var (
	ourRenderers  = []string{library + "/cloudinit", library + "/ignition", library + "/script"}
	capiOracles   = []string{"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit", "sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/ignition", "sigs.k8s.io/cluster-api/bootstrap/kubeadm/reconcilers"}
	kubeadmAndK8s = []string{"sigs.k8s.io/cluster-api", "k8s.io/client-go", "sigs.k8s.io/controller-runtime", "k8s.io/api/", "k8s.io/apimachinery"}
)

var rules = []rule{
	{pkg: library, forbidden: append(append([]string{module + "/"}, kubeadmAndK8s...), ourRenderers...),
		why: "the Plan is neutral: no kubeadm, Cluster API, Kubernetes client or renderer", exact: true},
	{pkg: library, forbidden: append([]string{module + "/", "k8s.io/", "sigs.k8s.io/"}, kubeadmAndK8s...),
		why: "the library is a module of its own: nothing of the root module (bootstrap, controllers, add-ons, internal) and nothing of Kubernetes"},
	{library + "/cloudinit", []string{module + "/bootstrap", module + "/controllers", module + "/addons", library + "/ignition", library + "/script", "sigs.k8s.io/cluster-api", "sigs.k8s.io/controller-runtime"},
		"renderers know only the Plan", false, false},
	{library + "/ignition", []string{module + "/bootstrap", module + "/controllers", module + "/addons", library + "/cloudinit", library + "/script", "sigs.k8s.io/controller-runtime", "sigs.k8s.io/cluster-api/bootstrap/kubeadm/reconcilers"},
		"renderers know only the Plan", false, false},
	{pkg: library + "/ignition/butane", forbidden: []string{module + "/bootstrap", module + "/controllers", module + "/addons", library + "/cloudinit", library + "/script", module + "/nodereport", module + "/api", "sigs.k8s.io/", "k8s.io/"},
		why: "the Butane translation knows ignition, provisioning and Butane only"},
	// The dialects meet only in package ignition, where each registers
	// itself (ignition.RegisterDialect): a program that wants one links
	// only that one, and neither reaches into the other.
	{library + "/ignition/legacy", []string{library + "/ignition/v3"},
		"the Ignition dialects do not import each other: shared code lives in package ignition or ignition/internal", false, false},
	{library + "/ignition/v3", []string{library + "/ignition/legacy"},
		"the Ignition dialects do not import each other: shared code lives in package ignition or ignition/internal", false, false},
	{module + "/addons", append([]string{module + "/controllers", module + "/bootstrap"}, ourRenderers...),
		"add-ons contribute to a Plan; they do not render or reconcile", false, false},
	{module + "/bootstrap", append([]string{module + "/controllers", module + "/addons"}, ourRenderers...),
		"bootstrap builds Plans; renderers and controllers sit above it", false, false},
	{module + "/controllers/bootstrapdata", append([]string{module + "/controllers", module + "/cmd", module + "/addons", module + "/nodereport"}, ourRenderers...),
		"the build verify and the reconciler share sits below both: the reconciler, the extensions and the renderers plug into it, never the other way", false, false},
	{pkg: module + "/addons", forbidden: []string{"sigs.k8s.io/", "k8s.io/", "gopkg.in/", module + "/bootstrap", module + "/controllers", library + "/cloudinit", library + "/ignition", library + "/script", module + "/api"},
		why: "add-ons are manifests, a script and the Plan: nothing Kubernetes-client-shaped", direct: true},
	{pkg: module + "/nodereport", forbidden: []string{"sigs.k8s.io/", "k8s.io/", "gopkg.in/", "github.com/coreos/", "github.com/flatcar/", module + "/bootstrap", module + "/controllers", library + "/cloudinit", library + "/ignition", library + "/script", module + "/api", module + "/addons"},
		why: "the node reporter (nodereport) knows the Plan and the standard library only", direct: true},
	{pkg: library + "/script", forbidden: []string{"sigs.k8s.io/", "k8s.io/", "gopkg.in/", "github.com/coreos/", "github.com/flatcar/", module + "/bootstrap", module + "/controllers", library + "/cloudinit", library + "/ignition", module + "/api", module + "/addons", module + "/nodereport"},
		why: "a provisioner knows only the Plan and the standard library", direct: true},
	{pkg: module + "/api", forbidden: []string{module + "/", "sigs.k8s.io/", "k8s.io/client-go", "k8s.io/api/", "github.com/"},
		why: "API types import only the standard library, apimachinery and themselves", direct: true},
	{pkg: module + "/", forbidden: capiOracles, why: "CABPK's renderers and reconciler are test oracles only"},
}

type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// deps lists every non-test package of the repository's two modules (the
// root and the library in provisioning/), each with its transitive deps.
func deps(t *testing.T) []listed {
	t.Helper()
	var pkgs []listed
	for _, dir := range []string{testenv.ModuleRoot(), filepath.Join(testenv.ModuleRoot(), "provisioning")} {
		cmd := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Imports,Deps", "./...")
		cmd.Dir = dir
		out, err := cmd.Output()
		require.NoError(t, err, dir)
		dec := json.NewDecoder(strings.NewReader(string(out)))
		for dec.More() {
			var p listed
			require.NoError(t, dec.Decode(&p))
			pkgs = append(pkgs, p)
		}
	}
	require.Contains(t, paths(pkgs), library+"/cloudinit", "the library module is listed")
	return pkgs
}

func paths(pkgs []listed) []string {
	var out []string
	for _, p := range pkgs {
		out = append(out, p.ImportPath)
	}
	return out
}

func violations(pkgs []listed, rules []rule) []string {
	var out []string
	for _, p := range pkgs {
		for _, r := range rules {
			if p.ImportPath != r.pkg && (r.exact || !strings.HasPrefix(p.ImportPath, strings.TrimSuffix(r.pkg, "/")+"/")) {
				continue
			}
			list := p.Deps
			if r.direct {
				list = p.Imports
			}
			for _, d := range list {
				// A package may use itself and what sits under it (an
				// exact rule: only itself); the root module's internal
				// packages serve it, except API types and the library,
				// which builds without the root module.
				if d == r.pkg || !r.exact && strings.HasPrefix(d, r.pkg) ||
					strings.HasPrefix(d, module+"/internal/") && !strings.HasPrefix(r.pkg, module+"/api") && !strings.HasPrefix(r.pkg, library) {
					continue
				}
				for _, f := range r.forbidden {
					if strings.HasPrefix(d, f) {
						out = append(out, fmt.Sprintf("%s imports %s: %s", p.ImportPath, d, r.why))
						break
					}
				}
			}
		}
	}
	return out
}

func TestImportRules(t *testing.T) {
	pkgs := deps(t)
	require.NotEmpty(t, pkgs)
	require.Empty(t, violations(pkgs, rules))
	require.Empty(t, butaneInIgnition(pkgs))
}

// TestImportRulesCatchViolations proves the check can fail.
func TestImportRulesCatchViolations(t *testing.T) {
	bad := []listed{
		{ImportPath: module + "/provisioning", Deps: []string{"fmt", "sigs.k8s.io/cluster-api/util/secret"}},
		{ImportPath: library + "/cloudinit", Deps: []string{module + "/bootstrap"}},
		{ImportPath: library + "/script", Deps: []string{module + "/internal/redact"}},
		{ImportPath: library + "/conformance", Deps: []string{"k8s.io/utils/ptr"}},
		{ImportPath: module + "/controllers", Deps: []string{"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit"}},
		{ImportPath: module + "/api/v1alpha1", Imports: []string{"sigs.k8s.io/controller-runtime/pkg/client"}},
		{ImportPath: module + "/addons/catalog", Imports: []string{"k8s.io/api/core/v1"}},
		{ImportPath: module + "/controllers/bootstrapdata", Deps: []string{module + "/controllers"}},
	}
	require.Len(t, violations(bad, rules), 10)
	require.Empty(t, violations([]listed{{ImportPath: library + "/cloudinit", Deps: []string{library, "bytes"}}}, rules))
	// Butane: ignition links none of it, ignition/butane only what sits
	// below it.
	require.Len(t, violations([]listed{{ImportPath: library + "/ignition/butane", Deps: []string{library + "/script", "k8s.io/client-go/kubernetes"}}}, rules), 4)
	require.Empty(t, violations([]listed{{ImportPath: library + "/ignition/butane", Deps: []string{library + "/ignition", library, "github.com/coreos/butane/base/util", "testing"}}}, rules))
	require.Len(t, butaneInIgnition([]listed{{ImportPath: library + "/ignition", Deps: []string{"github.com/coreos/butane/base/util", "testing"}}}), 2)
	require.Empty(t, butaneInIgnition([]listed{{ImportPath: library + "/ignition/butane", Deps: []string{"github.com/coreos/butane/base/util", "testing"}}}))
	require.Len(t, butaneInIgnition([]listed{{ImportPath: library + "/ignition/v3", Deps: []string{"github.com/coreos/butane/base/util"}}}), 1)
	// The dialects: each may use the front and ignition/internal, not the
	// other dialect.
	require.Len(t, violations([]listed{
		{ImportPath: library + "/ignition/legacy", Deps: []string{library + "/ignition/v3"}},
		{ImportPath: library + "/ignition/v3", Deps: []string{library + "/ignition/legacy"}},
	}, rules), 2)
	require.Empty(t, violations([]listed{
		{ImportPath: library + "/ignition/legacy", Deps: []string{library + "/ignition", library + "/ignition/internal/units", library}},
		{ImportPath: library + "/ignition/v3", Deps: []string{library + "/ignition", library + "/ignition/internal/units", library}},
	}, rules))
}

// butaneInIgnition lists what package ignition and the packages under it,
// except ignition/butane (which must link Butane), link of Butane, package
// testing and testify. They come only with ignition/butane, for the programs
// that opt into Butane; the rules above cover a package and everything
// under it, so this one is checked on its own.
func butaneInIgnition(pkgs []listed) []string {
	var out []string
	for _, p := range pkgs {
		if p.ImportPath != library+"/ignition" && !strings.HasPrefix(p.ImportPath, library+"/ignition/") ||
			p.ImportPath == library+"/ignition/butane" || strings.HasPrefix(p.ImportPath, library+"/ignition/butane/") {
			continue
		}
		for _, d := range p.Deps {
			if strings.HasPrefix(d, "github.com/coreos/butane/") || d == "testing" || strings.HasPrefix(d, "testing/") || strings.HasPrefix(d, "github.com/stretchr/testify/") {
				out = append(out, fmt.Sprintf("%s depends on %s: Butane comes only with ignition/butane", p.ImportPath, d))
			}
		}
	}
	return out
}

// floors are the layers of DESIGN.md's picture, lowest first, as path
// prefixes under the module: a package is on the floor of its longest
// matching prefix. Every package of the module must be on one, and none
// may depend, directly or not, on a package of a higher floor. Packages
// on one floor may use each other (the rules above keep siblings such as
// bootstrap and the renderers apart).
var floors = [][]string{
	{"api", "internal", "addons/catalog"},
	{"provisioning", "provisioning/conformance", "provisioning/plantest"},
	{"provisioning/cloudinit", "provisioning/ignition", "provisioning/script", "nodereport", "addons", "bootstrap"},
	{"controllers/bootstrapdata"},
	{"controllers"},
	{"cmd", "test", "examples"},
}

// floorOf returns the floor of a package of the module, or -1.
func floorOf(pkg string) int {
	rel, ok := strings.CutPrefix(pkg, module+"/")
	if !ok {
		return -1
	}
	best, floor := -1, -1
	for f, prefixes := range floors {
		for _, p := range prefixes {
			if (rel == p || strings.HasPrefix(rel, p+"/")) && len(p) > best {
				best, floor = len(p), f
			}
		}
	}
	return floor
}

// upwardArrows lists every package without a floor and every dependency of
// a package on a package of a higher floor.
func upwardArrows(pkgs []listed) []string {
	var out []string
	for _, p := range pkgs {
		f := floorOf(p.ImportPath)
		if f < 0 {
			out = append(out, p.ImportPath+" is on no floor: add it to floors")
			continue
		}
		for _, d := range p.Deps {
			if g := floorOf(d); g > f {
				out = append(out, fmt.Sprintf("%s (floor %d) depends on %s (floor %d)", p.ImportPath, f, d, g))
			}
		}
	}
	return out
}

// TestLayersPointDown: every package of the module, new ones included, is
// on a floor, and no import, direct or transitive, runs back up.
func TestLayersPointDown(t *testing.T) {
	pkgs := deps(t)
	require.NotEmpty(t, pkgs)
	require.Empty(t, upwardArrows(pkgs))
	require.Len(t, upwardArrows([]listed{
		{ImportPath: module + "/bootstrap/manifest", Deps: []string{module + "/internal/crdvalidate", module + "/test/testenv"}},
		{ImportPath: module + "/internal/redact", Deps: []string{module + "/provisioning"}},
		{ImportPath: module + "/newpkg"},
		{ImportPath: module + "/controllers/x", Deps: []string{library + "/cloudinit", module + "/api/v1alpha1"}},
		{ImportPath: library + "/conformance", Deps: []string{library + "/cloudinit"}},
	}), 4, "the check can fail")
}
