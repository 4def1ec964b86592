package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The Plans' node state, in every format with the real tools, is
// test/conformance's business (TestExamplesConformance runs this command
// with -plans); these tests hold the command and the import rule.

// TestCommand: the command writes each node in the formats that can carry
// it, owner-only since the data holds the token, and names the format that
// cannot (the script: no time client) instead of writing it.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("secret-token-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-out", dir, "-token-file", token}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() == "token" {
			continue
		}
		names = append(names, e.Name())
		if fi, err := e.Info(); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600", e.Name(), fi.Mode(), err)
		}
	}
	want := []string{"agent.cloud-config", "agent.ign", "server.cloud-config", "server.ign"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("wrote %v, want %v", names, want)
	}
	for _, n := range []string{"server", "agent"} {
		if !strings.Contains(stderr.String(), n+".sh: not written: script cannot express [ntp]") {
			t.Errorf("no word of the script's refusal of the %s:\n%s", n, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "secret-token-value") {
		t.Error("the token is in a message")
	}
}

// TestPlansJSON: -plans prints the Plans the command renders.
func TestPlansJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-plans", "-install-command", "true"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var plans map[string]struct {
		Users []struct{ Name, Sudo string }
		Units []struct {
			Name    string
			Enabled *bool
		}
		Commands []struct{ Script string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &plans); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"server", "agent"} {
		p := plans[n]
		if len(p.Users) != 1 || p.Users[0].Name != "jane.doe" || p.Units[0].Name != "rke2-"+n+".service" || p.Units[0].Enabled == nil || !*p.Units[0].Enabled {
			t.Errorf("%s: %+v", n, p)
		}
		if !strings.Contains(p.Commands[0].Script, "\ntrue\n") {
			t.Errorf("%s: the install command is not the one asked for: %q", n, p.Commands[0].Script)
		}
	}
}

// TestPublicAPIOnly: the example names only nodeboot's public
// provisioning packages (of Ignition, the front and the native dialect
// alone), and nothing it pulls in is kubeadm-, Cluster-API- or
// Kubernetes-client-shaped, or CABPK's Ignition 2.3.
func TestPublicAPIOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Imports, Deps []string }
	if err := json.Unmarshal(out, &pkg); err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, i := range pkg.Imports {
		if strings.HasPrefix(i, "github.com/nodeboot/nodeboot/") {
			ours = append(ours, strings.TrimPrefix(i, "github.com/nodeboot/nodeboot/"))
		}
	}
	sort.Strings(ours)
	if got := strings.Join(ours, " "); got != "provisioning provisioning/cloudinit provisioning/ignition provisioning/ignition/v3 provisioning/script" {
		t.Errorf("imports %s of nodeboot, want only its public provisioning API", got)
	}
	for _, d := range pkg.Deps {
		for _, bad := range []string{"sigs.k8s.io/", "k8s.io/", "github.com/nodeboot/nodeboot/bootstrap", "github.com/nodeboot/nodeboot/controllers", "github.com/nodeboot/nodeboot/api", "github.com/nodeboot/nodeboot/provisioning/ignition/legacy", "github.com/flatcar/"} {
			if strings.HasPrefix(d, bad) || strings.Contains(d, "kubeadm") {
				t.Errorf("the example depends on %s", d)
			}
		}
	}
}
