package ignition_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// TestV3SudoersFileNames: every sudo rule is in a file sudo's @includedir
// reads (no '.', no trailing '~', sudoers(5)), one per user, however alike
// the names; test/ignition proves it with the real sudo.
func TestV3SudoersFileNames(t *testing.T) {
	names := []string{"core", "jane.doe", "jane_doe", "ops~", ".hidden", strings.Repeat("a.", 200), strings.Repeat("a_", 200)}
	p := &provisioning.Plan{}
	for _, n := range names {
		p.Users = append(p.Users, provisioning.User{Name: n, Sudo: "ALL=(ALL) ALL"})
	}
	out, err := (&ignition.Renderer{}).Render(p, provisioning.Options{Version: "3.4.0"})
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Storage struct{ Files []struct{ Path string } }
	}
	if err := json.Unmarshal(out.Data, &cfg); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range cfg.Storage.Files {
		name, ok := strings.CutPrefix(f.Path, "/etc/sudoers.d/")
		if !ok {
			continue
		}
		if strings.Contains(name, ".") || strings.HasSuffix(name, "~") || name == "" || len(name) > 255 {
			t.Errorf("sudo skips or cannot have %q", f.Path)
		}
		if seen[name] {
			t.Errorf("two users share %s", f.Path)
		}
		seen[name] = true
	}
	if len(seen) != len(names) {
		t.Errorf("got %d sudoers files for %d users", len(seen), len(names))
	}
	if !seen["core"] {
		t.Error("a plain name is not kept as the file name")
	}
}

// TestLegacySudoersDottedNameWarns: CABPK's dialect keeps CABPK's
// /etc/sudoers.d/<name>, which sudo skips for a dotted name, so it warns
// at the rule.
func TestLegacySudoersDottedNameWarns(t *testing.T) {
	for name, warn := range map[string]bool{"jane.doe": true, "ops~": true, "core": false} {
		p := &provisioning.Plan{
			Files:    []provisioning.File{{Path: "/etc/kubeadm.yml", Permissions: "0640", Content: "x", BootstrapInput: true}},
			Users:    []provisioning.User{{Name: name, Sudo: "ALL=(ALL) ALL", Origin: provisioning.NewPath("spec", "users").Index(0).WithFields()}},
			Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join --config /etc/kubeadm.yml"}},
		}
		out, err := (&ignition.Renderer{}).Render(p, provisioning.Options{Version: provisioning.VersionCABPK})
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, w := range out.Warnings {
			got = got || w.Path.String() == "spec.users[0].sudo" && strings.Contains(w.Message, "sudo skips")
		}
		if got != warn {
			t.Errorf("%s: warning %v, want %v (%v)", name, got, warn, out.Warnings)
		}
		if !strings.Contains(string(out.Data), "/etc/sudoers.d/"+name) {
			t.Errorf("%s: CABPK's file name changed", name)
		}
	}
}
