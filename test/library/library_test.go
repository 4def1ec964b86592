// Package library checks the library (the Plan and the provisioners in
// provisioning/) as a Go module of its own, the way a provider takes it:
// it requires nothing of Kubernetes, declares the oldest Go its
// dependencies allow, and adding it to a provider pinned to an older
// Cluster API (testdata/olderpins) moves none of the provider's Go,
// Kubernetes or Cluster API pins. (Modules both share, such as testify, go
// to the higher of the two versions, as go mod tidy always does; the test
// logs them.)
package library

import (
	"encoding/json"
	"go/version"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/test/testenv"
)

const libraryPath = "github.com/nodeboot/nodeboot/provisioning"

// modFile is what `go mod edit -json` prints of a go.mod.
type modFile struct {
	Go        string
	Toolchain string
	Require   []struct {
		Path, Version string
	}
}

// run runs the go command in dir with the local toolchain only (a go line
// the library raised must show here, not fetch a newer Go), no workspace,
// and the environment's module cache and proxy: a fresh machine resolves
// the provider's module graph from the Go module proxy.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=-buildvcs=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

func readMod(t *testing.T, dir string) modFile {
	t.Helper()
	var m modFile
	if err := json.Unmarshal([]byte(run(t, dir, "mod", "edit", "-json")), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m modFile) versions() map[string]string {
	out := map[string]string{}
	for _, r := range m.Require {
		out[r.Path] = r.Version
	}
	return out
}

// kubernetesModule reports whether a module path is Kubernetes' or Cluster
// API's (controller-runtime included): what the library must not require
// and what a provider pins.
func kubernetesModule(path string) bool {
	return strings.HasPrefix(path, "k8s.io/") || strings.HasPrefix(path, "sigs.k8s.io/")
}

// moved lists what adding the library changed of the provider's pins that
// issue 23 protects: the go line, a toolchain line, and the version of
// every Kubernetes and Cluster API module (controller-runtime included) the
// provider required before.
func moved(before, after modFile) []string {
	var out []string
	if after.Go != before.Go {
		out = append(out, "go "+before.Go+" -> "+after.Go)
	}
	if after.Toolchain != before.Toolchain {
		out = append(out, "toolchain "+before.Toolchain+" -> "+after.Toolchain)
	}
	now := after.versions()
	for path, v := range before.versions() {
		if kubernetesModule(path) && now[path] != v {
			out = append(out, path+" "+v+" -> "+now[path])
		}
	}
	return out
}

// provider copies testdata/olderpins into a new directory, with nodeboot.go
// (the file that uses the library) or without it.
func provider(t *testing.T, withLibrary bool) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "main.go", "nodeboot.go"} {
		if name == "nodeboot.go" && !withLibrary {
			continue
		}
		data, err := os.ReadFile(filepath.Join("testdata", "olderpins", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// addLibrary adds the library in lib (a directory with its go.mod) to the
// provider in dir as `go get` of a tagged version would, and tidies.
func addLibrary(t *testing.T, dir, lib string) modFile {
	t.Helper()
	run(t, dir, "mod", "edit", "-require="+libraryPath+"@v0.0.0-00010101000000-000000000000", "-replace="+libraryPath+"="+lib)
	run(t, dir, "mod", "tidy")
	return readMod(t, dir)
}

// baseline is the provider's go.mod tidied without the library.
func baseline(t *testing.T) modFile {
	t.Helper()
	dir := provider(t, false)
	run(t, dir, "mod", "tidy")
	m := readMod(t, dir)
	// The pins issue 23 names: Cluster API v1.13.6 resolves these.
	want := map[string]string{"sigs.k8s.io/cluster-api": "v1.13.6", "sigs.k8s.io/controller-runtime": "v0.23.3", "k8s.io/client-go": "v0.35.4"}
	for path, v := range want {
		if got := m.versions()[path]; got != v {
			t.Fatalf("the provider pins %s %s, want %s", path, got, v)
		}
	}
	if m.Go != "1.25.0" {
		t.Fatalf("the provider declares go %s, want 1.25.0", m.Go)
	}
	return m
}

// TestOlderPinsConsumer: a provider pinned to Cluster API v1.13.6
// (controller-runtime v0.23.3, client-go v0.35.4, go 1.25.0) adds the
// library; go mod tidy moves none of those pins nor any other Kubernetes
// module's, and the provider builds and renders cloud-config, Ignition v3
// with Butane, and a script.
func TestOlderPinsConsumer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not resolving a provider's module graph")
	}
	before := baseline(t)
	dir := provider(t, true)
	after := addLibrary(t, dir, filepath.Join(testenv.ModuleRoot(), "provisioning"))
	if m := moved(before, after); len(m) > 0 {
		t.Fatalf("adding the library moved the provider's pins: %v", m)
	}
	now := after.versions()
	for path, v := range before.versions() {
		if now[path] != v {
			t.Logf("shared with the library, now at its version: %s %s -> %s", path, v, now[path])
		}
	}
	out := run(t, dir, "run", ".")
	for _, format := range []string{"cloud-config", "ignition", "script"} {
		var n int
		found := false
		for _, line := range strings.Split(out, "\n") {
			if rest, ok := strings.CutPrefix(line, format+" "); ok {
				found = json.Unmarshal([]byte(rest), &n) == nil && n > 0
			}
		}
		if !found {
			t.Errorf("the provider rendered no %s:\n%s", format, out)
		}
	}
}

// TestOlderPinsCatchesAMove proves the check can fail: a copy of the
// library that declares a newer Go, or requires a newer client-go, moves
// the provider's pins, and moved names each.
func TestOlderPinsCatchesAMove(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not resolving a provider's module graph")
	}
	before := baseline(t)
	for name, tc := range map[string]struct {
		edit []string
		want string
	}{
		"newer go":        {[]string{"-go=1.26.0"}, "go 1.25.0 -> 1.26.0"},
		"newer client-go": {[]string{"-require=k8s.io/client-go@v0.37.2"}, "k8s.io/client-go v0.35.4 -> v0.37.2"},
	} {
		t.Run(name, func(t *testing.T) {
			lib := t.TempDir()
			if err := os.CopyFS(lib, os.DirFS(filepath.Join(testenv.ModuleRoot(), "provisioning"))); err != nil {
				t.Fatal(err)
			}
			run(t, lib, append([]string{"mod", "edit"}, tc.edit...)...)
			after := addLibrary(t, provider(t, true), lib)
			if m := moved(before, after); !slices.Contains(m, tc.want) {
				t.Fatalf("a library with %s: moved %v, want %q among them", name, m, tc.want)
			}
		})
	}
}

// TestLibraryRequiresNoKubernetes: the library's module graph holds no
// Kubernetes, Cluster API or controller-runtime module, and its go line is
// the oldest its dependencies allow (the highest go line among them), so it
// asks no provider for a newer Go than it needs.
func TestLibraryRequiresNoKubernetes(t *testing.T) {
	lib := filepath.Join(testenv.ModuleRoot(), "provisioning")
	out := run(t, lib, "list", "-m", "-json", "all")
	dec := json.NewDecoder(strings.NewReader(out))
	oldest := "go1.0"
	var self string
	for dec.More() {
		var m struct {
			Path      string
			GoVersion string
			Main      bool
		}
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if kubernetesModule(m.Path) {
			t.Errorf("the library's module graph holds %s", m.Path)
		}
		if m.Main {
			self = m.GoVersion
			continue
		}
		if m.GoVersion != "" && version.Compare("go"+m.GoVersion, oldest) > 0 {
			oldest = "go" + m.GoVersion
		}
	}
	if version.Compare("go"+self, oldest) != 0 {
		t.Errorf("the library declares go %s; its dependencies need %s", self, strings.TrimPrefix(oldest, "go"))
	}
	for _, r := range readMod(t, lib).Require {
		if kubernetesModule(r.Path) {
			t.Errorf("the library's go.mod requires %s", r.Path)
		}
	}
}
