// Package test holds repository-wide checks: the import rules DESIGN.md sets
// between nodeboot's packages.
package test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/test/testenv"
)

const module = "github.com/nodeboot/nodeboot"

// rule forbids packages under `pkg` from depending, directly or not, on any
// import path with one of the `forbidden` prefixes.
type rule struct {
	pkg       string
	forbidden []string
	why       string
	// direct checks only the package's own imports, for rules about what a
	// package may name rather than what it may pull in.
	direct bool
}

var (
	ourRenderers  = []string{module + "/cloudinit", module + "/ignition"}
	capiOracles   = []string{"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit", "sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/ignition", "sigs.k8s.io/cluster-api/bootstrap/kubeadm/reconcilers"}
	kubeadmAndK8s = []string{"sigs.k8s.io/cluster-api", "k8s.io/client-go", "sigs.k8s.io/controller-runtime", "k8s.io/api/", "k8s.io/apimachinery"}
)

var rules = []rule{
	{module + "/provisioning", append(append([]string{module + "/"}, kubeadmAndK8s...), ourRenderers...),
		"the Plan is neutral: no kubeadm, Cluster API, Kubernetes client or renderer", false},
	{module + "/cloudinit", []string{module + "/bootstrap", module + "/controllers", module + "/addons", module + "/ignition", "sigs.k8s.io/cluster-api", "sigs.k8s.io/controller-runtime"},
		"renderers know only the Plan", false},
	{module + "/ignition", []string{module + "/bootstrap", module + "/controllers", module + "/addons", module + "/cloudinit", "sigs.k8s.io/controller-runtime", "sigs.k8s.io/cluster-api/bootstrap/kubeadm/reconcilers"},
		"renderers know only the Plan", false},
	{pkg: module + "/ignition/butane", forbidden: []string{module + "/bootstrap", module + "/controllers", module + "/addons", module + "/cloudinit", module + "/script", module + "/nodereport", module + "/api", "sigs.k8s.io/", "k8s.io/"},
		why: "the Butane translation knows ignition, provisioning and Butane only"},
	// The dialects meet only in package ignition, where each registers
	// itself (ignition.RegisterDialect): a program that wants one links
	// only that one, and neither reaches into the other.
	{module + "/ignition/legacy", []string{module + "/ignition/v3"},
		"the Ignition dialects do not import each other: shared code lives in package ignition or ignition/internal", false},
	{module + "/ignition/v3", []string{module + "/ignition/legacy"},
		"the Ignition dialects do not import each other: shared code lives in package ignition or ignition/internal", false},
	{module + "/addons", append([]string{module + "/controllers", module + "/bootstrap"}, ourRenderers...),
		"add-ons contribute to a Plan; they do not render or reconcile", false},
	{module + "/bootstrap", append([]string{module + "/controllers", module + "/addons"}, ourRenderers...),
		"bootstrap builds Plans; renderers and controllers sit above it", false},
	{module + "/controllers/bootstrapdata", append([]string{module + "/controllers", module + "/cmd", module + "/addons", module + "/nodereport"}, ourRenderers...),
		"the build verify and the reconciler share sits below both: the reconciler, the extensions and the renderers plug into it, never the other way", false},
	{pkg: module + "/addons", forbidden: []string{"sigs.k8s.io/", "k8s.io/", "gopkg.in/", module + "/bootstrap", module + "/controllers", module + "/cloudinit", module + "/ignition", module + "/api"},
		why: "add-ons are manifests, a script and the Plan: nothing Kubernetes-client-shaped", direct: true},
	{pkg: module + "/nodereport", forbidden: []string{"sigs.k8s.io/", "k8s.io/", "gopkg.in/", "github.com/coreos/", "github.com/flatcar/", module + "/bootstrap", module + "/controllers", module + "/cloudinit", module + "/ignition", module + "/api", module + "/addons"},
		why: "the node reporter (nodereport) knows the Plan and the standard library only", direct: true},
	{pkg: module + "/script", forbidden: []string{"sigs.k8s.io/", "k8s.io/", "gopkg.in/", "github.com/coreos/", "github.com/flatcar/", module + "/bootstrap", module + "/controllers", module + "/cloudinit", module + "/ignition", module + "/api", module + "/addons", module + "/nodereport"},
		why: "a provisioner knows only the Plan and the standard library", direct: true},
	{pkg: module + "/api", forbidden: []string{module + "/", "sigs.k8s.io/", "k8s.io/client-go", "k8s.io/api/", "github.com/"},
		why: "API types import only the standard library, apimachinery and themselves", direct: true},
	{module + "/", capiOracles, "CABPK's renderers and reconciler are test oracles only", false},
}

type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// deps lists every non-test package of the module with its transitive deps.
func deps(t *testing.T) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Imports,Deps", "./...")
	cmd.Dir = testenv.ModuleRoot()
	out, err := cmd.Output()
	require.NoError(t, err)
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listed
		require.NoError(t, dec.Decode(&p))
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func violations(pkgs []listed, rules []rule) []string {
	var out []string
	for _, p := range pkgs {
		for _, r := range rules {
			if p.ImportPath != r.pkg && !strings.HasPrefix(p.ImportPath, strings.TrimSuffix(r.pkg, "/")+"/") {
				continue
			}
			list := p.Deps
			if r.direct {
				list = p.Imports
			}
			for _, d := range list {
				if strings.HasPrefix(d, r.pkg) || strings.HasPrefix(d, module+"/internal/") && !strings.HasPrefix(r.pkg, module+"/api") {
					continue
				}
				for _, f := range r.forbidden {
					if strings.HasPrefix(d, f) {
						out = append(out, fmt.Sprintf("%s imports %s: %s", p.ImportPath, d, r.why))
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
		{ImportPath: module + "/cloudinit", Deps: []string{module + "/bootstrap"}},
		{ImportPath: module + "/controllers", Deps: []string{"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit"}},
		{ImportPath: module + "/api/v1alpha1", Imports: []string{"sigs.k8s.io/controller-runtime/pkg/client"}},
		{ImportPath: module + "/addons/catalog", Imports: []string{"k8s.io/api/core/v1"}},
		{ImportPath: module + "/controllers/bootstrapdata", Deps: []string{module + "/controllers"}},
	}
	require.Len(t, violations(bad, rules), 6)
	require.Empty(t, violations([]listed{{ImportPath: module + "/cloudinit", Deps: []string{module + "/provisioning", "bytes"}}}, rules))
	// Butane: ignition links none of it, ignition/butane only what sits
	// below it.
	require.Len(t, violations([]listed{{ImportPath: module + "/ignition/butane", Deps: []string{module + "/script", "k8s.io/client-go/kubernetes"}}}, rules), 2)
	require.Empty(t, violations([]listed{{ImportPath: module + "/ignition/butane", Deps: []string{module + "/ignition", module + "/provisioning", "github.com/coreos/butane/base/util", "testing"}}}, rules))
	require.Len(t, butaneInIgnition([]listed{{ImportPath: module + "/ignition", Deps: []string{"github.com/coreos/butane/base/util", "testing"}}}), 2)
	require.Empty(t, butaneInIgnition([]listed{{ImportPath: module + "/ignition/butane", Deps: []string{"github.com/coreos/butane/base/util", "testing"}}}))
	require.Len(t, butaneInIgnition([]listed{{ImportPath: module + "/ignition/v3", Deps: []string{"github.com/coreos/butane/base/util"}}}), 1)
	// The dialects: each may use the front and ignition/internal, not the
	// other dialect.
	require.Len(t, violations([]listed{
		{ImportPath: module + "/ignition/legacy", Deps: []string{module + "/ignition/v3"}},
		{ImportPath: module + "/ignition/v3", Deps: []string{module + "/ignition/legacy"}},
	}, rules), 2)
	require.Empty(t, violations([]listed{
		{ImportPath: module + "/ignition/legacy", Deps: []string{module + "/ignition", module + "/ignition/internal/units", module + "/provisioning"}},
		{ImportPath: module + "/ignition/v3", Deps: []string{module + "/ignition", module + "/ignition/internal/units", module + "/provisioning"}},
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
		if p.ImportPath != module+"/ignition" && !strings.HasPrefix(p.ImportPath, module+"/ignition/") ||
			p.ImportPath == module+"/ignition/butane" || strings.HasPrefix(p.ImportPath, module+"/ignition/butane/") {
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
	{"provisioning"},
	{"cloudinit", "ignition", "script", "nodereport", "addons", "bootstrap"},
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
		{ImportPath: module + "/controllers/x", Deps: []string{module + "/cloudinit", module + "/api/v1alpha1"}},
	}), 3, "the check can fail")
}
