package script_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportsOnlyProvisioning holds the package to what it shows: a
// provisioner needs nodeboot's provisioning package and nothing else of
// nodeboot or outside the standard library.
func TestImportsOnlyProvisioning(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(out))
	want := []string{"github.com/nodeboot/nodeboot/provisioning", "github.com/nodeboot/nodeboot/provisioning/script"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("non-standard dependencies %v, want %v", got, want)
	}
}

// TestConsumerSize measures what the script provisioner adds to a program
// that already uses the provisioning package: the cost of adding a
// provisioner. It builds two small programs (a few seconds with a warm
// build cache).
func TestConsumerSize(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not building consumer programs")
	}
	const limit = 256 << 10
	base := build(t, `import "github.com/nodeboot/nodeboot/provisioning"
func main() { _, _ = provisioning.Get("script"); _ = (&provisioning.Plan{}).Validate() }`)
	with := build(t, `import (
	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/script"
)
func main() { p, _ := provisioning.Get("script"); _, _ = p.Render(&provisioning.Plan{}, provisioning.Options{}) }`)
	delta := with - base
	t.Logf("a provisioning-only consumer is %d bytes; with the script provisioner %d (+%d bytes)", base, with, delta)
	if delta <= 0 || delta > limit {
		t.Errorf("the script provisioner adds %d bytes, want (0, %d]", delta, limit)
	}
}

// build compiles a main package from src as if it were a directory of
// this module (through -overlay, so the tree is not touched and it uses
// this tree's packages) and returns the binary's size.
func build(t *testing.T, src string) int64 {
	t.Helper()
	tmp := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(main, []byte("package main\n\n"+src+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	virtual := filepath.Join(wd, "consumer-overlay", "main.go")
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {virtual: main}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "consumer")
	cmd := exec.Command("go", "build", "-trimpath", "-overlay", filepath.Join(tmp, "overlay.json"), "-o", bin, "./consumer-overlay")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
