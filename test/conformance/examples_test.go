package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/conformance"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// standIn is an install command that downloads nothing: it writes the
// binary the example's installer would, as the conformance node case's
// pre command does (the sandbox has no network).
func standIn(binary string) string {
	return "mkdir -p " + filepath.Dir(binary) + "\nprintf '#!/bin/sh\\necho stand-in\\n' > " + binary + "\nchmod 0755 " + binary
}

// examples are the repository's example providers (Go modules of their
// own, so they are asked for their Plans with -plans rather than imported)
// and the flags that make their Plans bootable offline.
var examples = []struct {
	name string
	args []string
}{
	{"k3s", []string{"-install-command", standIn("/usr/local/bin/k3s"), "-ssh-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIConformanceK3sExampleKey000000000000000000 ops@example"}},
	{"rke2", []string{
		"-install-command", standIn("/usr/local/bin/rke2"), "-mirror", "https://mirror.example:5000", "-ntp", "ntp.conformance.example",
		"-ssh-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIConformanceRke2ExampleKey00000000000000000 jane.doe@example",
	}},
}

var examplePlans sync.Map // example name -> func() (map[string]json.RawMessage, error)

// plansOf runs the example with -plans once per test binary and returns its
// Plans by node name, as JSON.
func plansOf(t *testing.T, name string, args []string) map[string]json.RawMessage {
	t.Helper()
	f, _ := examplePlans.LoadOrStore(name, sync.OnceValues(func() (map[string]json.RawMessage, error) {
		cmd := exec.Command("go", append([]string{"run", ".", "-plans"}, args...)...)
		cmd.Dir = filepath.Join(testenv.ModuleRoot(), "examples", name)
		// The example is its own module with a replace to this tree.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go run ./examples/%s -plans: %w\n%s", name, err, stderr.String())
		}
		var plans map[string]json.RawMessage
		if err := json.Unmarshal(out, &plans); err != nil {
			return nil, fmt.Errorf("examples/%s -plans: %w", name, err)
		}
		return plans, nil
	}))
	plans, err := f.(func() (map[string]json.RawMessage, error))()
	require.NoError(t, err)
	return plans
}

// decodePlan decodes a Plan an example printed. Paths print as their
// text and do not decode: an example's elements carry no Origin, so an
// empty one is dropped and any other is an error.
func decodePlan(data json.RawMessage) (*provisioning.Plan, error) {
	var generic any
	if err := json.Unmarshal(data, &generic); err != nil {
		return nil, err
	}
	var strip func(v any) error
	strip = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == "Origin" || k == "Origins" {
					if s, ok := x.(string); ok && s != "" {
						return fmt.Errorf("an example's Plan has an Origin, %q", s)
					}
					if _, ok := x.(string); ok {
						delete(v, k)
						continue
					}
				}
				if err := strip(x); err != nil {
					return err
				}
			}
		case []any:
			for _, x := range v {
				if err := strip(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := strip(generic); err != nil {
		return nil, err
	}
	if o, ok := generic.(map[string]any)["Origins"].(map[string]any); ok {
		for k, x := range o {
			if s, _ := x.(string); s != "" {
				return nil, fmt.Errorf("an example's Plan has an Origin at %s", k)
			}
			delete(o, k)
		}
	}
	clean, err := json.Marshal(generic)
	if err != nil {
		return nil, err
	}
	var p provisioning.Plan
	return &p, json.Unmarshal(clean, &p)
}

// exampleDepartures are departures (the README's meaning table) in terms
// of any Plan, for Cases made with conformance.FromPlan.
var exampleDepartures = map[string]func(p *provisioning.Plan, w *conformance.State){
	"ignition@" + provisioning.VersionCABPK: func(_ *provisioning.Plan, w *conformance.State) {
		// Enabled by Ignition, so started by systemd at boot, never after
		// the pre commands.
		for i := range w.Units {
			w.Units[i].StartedAfter = ""
		}
		// /etc/sudoers.d/<name>: sudo skips a file whose name has a dot.
		for i := range w.Users {
			if strings.Contains(w.Users[i].Name, ".") {
				w.Users[i].Sudo = ""
			}
		}
	},
}

// TestExamplesConformance runs the example providers' Plans (examples/k3s
// and examples/rke2, server and agent) through every target, as
// TestConformance runs the Cases: the state each Plan promises
// (conformance.FromPlan derives it from the Plan), or the refusal
// Capabilities predicts.
func TestExamplesConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not booting nodes with the real tools")
	}
	testenv.RequireRoot(t)
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel()
			plans := plansOf(t, ex.name, ex.args)
			nodes := make([]string, 0, len(plans))
			for n := range plans {
				nodes = append(nodes, n)
			}
			sort.Strings(nodes)
			require.NotEmpty(t, nodes)
			for _, node := range nodes {
				data := plans[node]
				plan := func() *provisioning.Plan {
					p, err := decodePlan(data)
					require.NoError(t, err)
					return p
				}
				c := conformance.FromPlan(ex.name+"-"+node, plan)
				for _, tg := range conformanceTargets() {
					t.Run(node+"/"+tg.String(), func(t *testing.T) {
						t.Parallel()
						runCase(t, tg, c, func(w *conformance.State) {
							if d := exampleDepartures[tg.String()]; d != nil {
								d(plan(), w)
							}
						})
					})
				}
			}
		})
	}
}

// runCase renders c for tg and checks the node the real tool makes of it,
// or the refusal Capabilities predicts; depart adjusts the State to a
// CABPK dialect's departures.
func runCase(t *testing.T, tg target, c conformance.Case, depart func(*conformance.State)) {
	t.Helper()
	support, err := provisioning.Capabilities(tg.format, tg.version)
	require.NoError(t, err, tg.String())
	p, err := provisioning.Get(tg.format)
	require.NoError(t, err)
	out, err := p.Render(c.Plan(), provisioning.Options{Version: tg.version})
	if missing := c.Missing(support); len(missing) > 0 {
		require.NoError(t, conformance.Refused(err, missing), "Capabilities says %s lacks %v", tg, missing)
		t.Logf("%s refuses %s, as Capabilities says: %v", tg, c.Name, err)
		return
	}
	require.NoError(t, err, "Capabilities says %s supports every element of %s (%v)", tg, c.Name, c.Uses)
	w := c.Want
	w.Files = append([]conformance.File(nil), w.Files...)
	w.Users = append([]conformance.User(nil), w.Users...)
	w.Units = append([]conformance.Unit(nil), w.Units...)
	w.Contains = append([]conformance.Contains(nil), w.Contains...)
	apply := tg.apply
	if tg.String() == cabpkCloudConfig.String() && nothingRan(c.Plan(), out.Warnings, &w) {
		t.Logf("%s warns that cloud-init runs none of %s: %v", tg, c.Name, out.Warnings)
		apply = bootUnprocessed
	} else if depart != nil {
		depart(&w)
	}
	c.Want = w
	node := apply(t, c, out.Data)
	require.NoError(t, c.Verify(node), "%s: the node differs from the state %s's Plan promises", tg, c.Name)
}
