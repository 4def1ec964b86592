package conformance

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
)

// TestExpectAgreesWithCases: the State Expect derives from each succeeding
// Case's Plan is the State written by hand for it (files, users, units,
// texts to contain), and Uses finds the Elements the Case says it uses.
// The hand-written States come from the Plan's godoc, so this holds
// FromPlan, which examples rely on, to the same reading.
func TestExpectAgreesWithCases(t *testing.T) {
	for _, c := range Cases() {
		if c.Want.ExitCode != 0 {
			continue
		}
		if !derived(c.Uses) {
			continue // elements whose state Expect cannot know (per-node values, user data)
		}
		t.Run(c.Name, func(t *testing.T) {
			p := c.Plan()
			got := Expect(p)
			files := map[string]File{}
			for _, f := range got.Files {
				files[f.Path] = f
			}
			for _, w := range c.Want.Files {
				if f, ok := files[w.Path]; (ok || !strings.HasPrefix(w.Path, provisioning.UnitDir)) && f != w {
					t.Errorf("Expect: %+v, the case: %+v", f, w)
				}
			}
			if len(got.Users) != len(c.Want.Users) {
				t.Errorf("Expect: users %+v, the case: %+v", got.Users, c.Want.Users)
			}
			for i := range got.Users {
				if i < len(c.Want.Users) && fmt.Sprint(got.Users[i]) != fmt.Sprint(c.Want.Users[i]) {
					t.Errorf("Expect: user %+v, the case: %+v", got.Users[i], c.Want.Users[i])
				}
			}
			for i, u := range got.Units {
				w := c.Want.Units[i]
				u.StartedAfter, w.StartedAfter = "", ""
				if !reflect.DeepEqual(u, w) {
					t.Errorf("Expect: unit %+v, the case: %+v", u, w)
				}
			}
			for _, ct := range c.Want.Contains {
				found := false
				for _, g := range got.Contains {
					found = found || g.Text == ct.Text
				}
				if !found {
					t.Errorf("Expect lacks the text %q the case wants", ct.Text)
				}
			}
			if g, w := fmt.Sprint(Uses(p)), fmt.Sprint(c.Uses); g != w {
				t.Errorf("Uses: %s, the case uses %s", g, w)
			}
		})
	}
}

// derived: every element in uses is one Expect and Uses know.
func derived(uses []provisioning.Element) bool {
	known := map[provisioning.Element]bool{}
	for _, e := range Uses(everything()) {
		known[e] = true
	}
	for _, e := range uses {
		if !known[e] {
			return false
		}
	}
	return true
}

// everything is a Plan that uses every element Uses knows.
func everything() *provisioning.Plan {
	yes := true
	return &provisioning.Plan{
		Files: []provisioning.File{{Owner: "a", Append: &yes, Encoding: provisioning.EncodingGzip}},
		Users: []provisioning.User{{Sudo: "a", SSHAuthorizedKeys: []string{"k"}, Passwd: "p"}},
		Units: []provisioning.Unit{{DropIns: []provisioning.DropIn{{}}}},
		NTP:   &provisioning.NTP{}, Disks: &provisioning.DiskSetup{}, Mounts: []provisioning.Mount{{}},
		BootCommands: []string{"a"}, Commands: []provisioning.Command{{}}, Sentinel: "/s",
	}
}

// TestInstrument: each command logs its Done line after its script, in a
// subshell, and keeps to one line when the script does.
func TestInstrument(t *testing.T) {
	p := &provisioning.Plan{Commands: []provisioning.Command{
		{Phase: provisioning.PhasePre, Script: "a\nexit 0"},
		{Phase: provisioning.PhaseBootstrap, Script: "b"},
	}}
	q := Instrument(p)
	if p.Commands[0].Script != "a\nexit 0" {
		t.Fatal("Instrument changed its argument")
	}
	want := []string{
		"(\na\nexit 0\n)\n" + log("pre commands[0] done"),
		"(b); " + log("bootstrap commands[1] done"),
	}
	for i, c := range q.Commands {
		if c.Script != want[i] {
			t.Errorf("commands[%d]: %q, want %q", i, c.Script, want[i])
		}
	}
}

// TestSudoListed: the rule as `sudo -l -U` prints it (sudo 1.9's format).
func TestSudoListed(t *testing.T) {
	for rule, want := range map[string]string{
		"ALL=(ALL) NOPASSWD:ALL":         "(ALL) NOPASSWD: ALL",
		"ALL = (ALL:ALL)  ALL":           "(ALL : ALL) ALL",
		"ALL=(root) NOPASSWD: /bin/true": "(root) NOPASSWD: /bin/true",
		"not a rule":                     "",
		"ALL=(ALL) ALL\nALL=(ALL) ALL":   "",
	} {
		if got := sudoListed(rule); got != want {
			t.Errorf("sudoListed(%q) = %q, want %q", rule, got, want)
		}
	}
}

// A provider's own Plan as a conformance Case: the State comes from the
// Plan, so a runner checks the provider's node without an expectation
// written by hand.
func ExampleFromPlan() {
	yes := true
	c := FromPlan("my-provider-worker", func() *provisioning.Plan {
		return &provisioning.Plan{
			Files: []provisioning.File{{Path: "/etc/my/config.yaml", Permissions: "0600", Content: "a: b\n"}},
			Units: []provisioning.Unit{{Name: "my.service", Enabled: &yes, Contents: "[Service]\nExecStart=/usr/local/bin/my\n"}},
			Commands: []provisioning.Command{
				{Phase: provisioning.PhasePre, Script: "install-my-binary"},
				{Phase: provisioning.PhaseBootstrap, Script: "my join"},
			},
			Sentinel: "/run/my/success",
		}
	})
	fmt.Println(c.Uses)
	for _, f := range c.Want.Files {
		fmt.Printf("%s %04o %s\n", f.Path, f.Mode, f.Owner)
	}
	fmt.Println(strings.Join(c.Want.Log, ", "))
	fmt.Println(c.Want.Units[0].Name, "started after", c.Want.Units[0].StartedAfter)
	// Output:
	// [files units commands sentinel]
	// /etc/my/config.yaml 0600 root:root
	// /run/my/success 0644 root:root
	// pre commands[0] done, bootstrap commands[1] done
	// my.service started after pre commands[0] done
}
