package provisioning_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodeboot/nodeboot/provisioning"
)

func TestValidateUnits(t *testing.T) {
	yes := true
	ok := func() provisioning.Plan {
		return provisioning.Plan{
			Files: []provisioning.File{{Path: "/etc/k3s/config.yaml", Permissions: "0600", Content: "x: y\n"}},
			Units: []provisioning.Unit{
				{Name: "k3s.service", Contents: "[Service]\nExecStart=/usr/local/bin/k3s server\n", Enabled: &yes},
				{Name: "containerd.service", DropIns: []provisioning.DropIn{{Name: "10-limits.conf", Contents: "[Service]\nLimitNOFILE=1048576\n"}}},
				{Name: "getty@tty1.service", DropIns: []provisioning.DropIn{{Name: "autologin.conf", Contents: "[Service]\n"}}},
				{Name: "var-lib-rancher.mount", Contents: "[Mount]\nWhat=/dev/vdb\nWhere=/var/lib/rancher\n", Origin: provisioning.NewPath("spec", "units").Index(0).WithFields()},
			},
		}
	}
	tests := []struct {
		name   string
		mutate func(*provisioning.Plan)
		want   []string
	}{
		{"valid", func(*provisioning.Plan) {}, nil},
		{"escaped name", func(p *provisioning.Plan) { p.Units[0].Name = `dev-disk-by\x2dlabel-data.swap` }, nil},
		{"empty name", func(p *provisioning.Plan) { p.Units[0].Name = "" }, []string{"units[0].name: must not be empty"}},
		{"no type suffix", func(p *provisioning.Plan) { p.Units[0].Name = "k3s" },
			[]string{"units[0].name: must end in a unit type suffix (.service, .socket, .device, .mount, .automount, .swap, .target, .path, .timer, .slice, .scope)"}},
		{"unknown suffix", func(p *provisioning.Plan) { p.Units[0].Name = "k3s.conf" },
			[]string{"units[0].name: must end in a unit type suffix (.service, .socket, .device, .mount, .automount, .swap, .target, .path, .timer, .slice, .scope)"}},
		{"slash", func(p *provisioning.Plan) { p.Units[0].Name = "../k3s.service" },
			[]string{`units[0].name: must be a unit file name of letters, digits and -_.@:\ (no '/', blanks or line breaks)`}},
		{"newline", func(p *provisioning.Plan) { p.Units[0].Name = "k3s.service\nExecStart=x" },
			[]string{`units[0].name: must be a unit file name of letters, digits and -_.@:\ (no '/', blanks or line breaks)`}},
		{"blank", func(p *provisioning.Plan) { p.Units[0].Name = "k3s server.service" },
			[]string{`units[0].name: must be a unit file name of letters, digits and -_.@:\ (no '/', blanks or line breaks)`}},
		{"suffix only", func(p *provisioning.Plan) { p.Units[0].Name = ".service" },
			[]string{"units[0].name: must be NAME.service, NAME@.service or NAME@INSTANCE.service"}},
		{"instance without template", func(p *provisioning.Plan) { p.Units[0].Name = "@tty1.service" },
			[]string{"units[0].name: must be NAME.service, NAME@.service or NAME@INSTANCE.service"}},
		{"two @", func(p *provisioning.Plan) { p.Units[0].Name = "a@b@c.service" },
			[]string{"units[0].name: must be NAME.service, NAME@.service or NAME@INSTANCE.service"}},
		{"too long", func(p *provisioning.Plan) { p.Units[0].Name = strings.Repeat("a", 248) + ".service" },
			[]string{"units[0].name: must be at most 255 bytes (systemd's limit)"}},
		{"duplicate name", func(p *provisioning.Plan) { p.Units[1].Name = "var-lib-rancher.mount" },
			[]string{"spec.units[0].name: duplicate unit name (also units[1])"}},
		{"no contents, no drop-ins", func(p *provisioning.Plan) { p.Units[0].Contents = "" },
			[]string{"units[0].contents: must not be empty unless the unit has drop-ins (which amend a unit the image has)"}},
		{"drop-in not .conf", func(p *provisioning.Plan) { p.Units[1].DropIns[0].Name = "10-limits" },
			[]string{"units[1].dropIns[0].name: must be a file name ending in .conf (systemd reads no other drop-in)"}},
		{"drop-in only .conf", func(p *provisioning.Plan) { p.Units[1].DropIns[0].Name = ".conf" },
			[]string{"units[1].dropIns[0].name: must be a file name ending in .conf (systemd reads no other drop-in)"}},
		{"drop-in with slash", func(p *provisioning.Plan) { p.Units[1].DropIns[0].Name = "../../x.conf" },
			[]string{`units[1].dropIns[0].name: must be a file name of letters, digits and -_.@:\ (no '/', blanks or line breaks)`}},
		{"duplicate drop-in", func(p *provisioning.Plan) { p.Units[1].DropIns = append(p.Units[1].DropIns, p.Units[1].DropIns[0]) },
			[]string{"units[1].dropIns[1].name: duplicate drop-in name in this unit"}},
		{"empty drop-in", func(p *provisioning.Plan) { p.Units[1].DropIns[0].Contents = "" },
			[]string{"units[1].dropIns[0].contents: must not be empty"}},
		{"file at a unit's path", func(p *provisioning.Plan) {
			p.Files = append(p.Files, provisioning.File{Path: "/etc/systemd/system/k3s.service", Content: "x"})
		}, []string{"files[1].path: is the file of units[0]; write the unit through units only"}},
		{"file at a drop-in's path", func(p *provisioning.Plan) {
			p.Files = append(p.Files, provisioning.File{Path: "/etc/systemd/system/containerd.service.d/10-limits.conf", Content: "x"})
		}, []string{"files[1].path: is the file of units[1].dropIns[0]; write the unit through units only"}},
		{"file next to a unit is fine", func(p *provisioning.Plan) {
			p.Files = append(p.Files, provisioning.File{Path: "/etc/systemd/system/containerd.service.d/20-other.conf", Content: "x"})
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := ok()
			tc.mutate(&p)
			ps := p.Validate()
			var got []string
			for _, pr := range ps {
				got = append(got, pr.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("problems (-want +got):\n%s", diff)
			}
			if len(tc.want) == 0 {
				return
			}
			err := ps.Err()
			if !errors.Is(err, provisioning.ErrInvalid) {
				t.Fatalf("unit problems must match ErrInvalid: %v", err)
			}
			for _, pr := range ps {
				if pr.Hazard {
					t.Fatalf("%s: units come only from the library API; a unit problem is never a hazard", pr)
				}
			}
		})
	}
}

func TestUnitFiles(t *testing.T) {
	if got := provisioning.UnitFile("k3s.service"); got != "/etc/systemd/system/k3s.service" {
		t.Fatalf("UnitFile = %q", got)
	}
	if got := provisioning.DropInFile("containerd.service", "10-limits.conf"); got != "/etc/systemd/system/containerd.service.d/10-limits.conf" {
		t.Fatalf("DropInFile = %q", got)
	}
}

// A unit is declared once; each provisioner decides how the node gets it.
// Validate names the field of every unit problem.
func ExampleUnit() {
	enabled := true
	p := &provisioning.Plan{Units: []provisioning.Unit{
		{Name: "k3s.service", Enabled: &enabled, Contents: "[Service]\nExecStart=/usr/local/bin/k3s server\n"},
		{Name: "containerd.service", DropIns: []provisioning.DropIn{{Name: "10-limits", Contents: "[Service]\nLimitNOFILE=1048576\n"}}},
		{Name: "k3s-agent", Contents: "[Service]\n"},
	}}
	for _, pr := range p.Validate() {
		fmt.Println(pr)
	}
	// Output:
	// units[1].dropIns[0].name: must be a file name ending in .conf (systemd reads no other drop-in)
	// units[2].name: must end in a unit type suffix (.service, .socket, .device, .mount, .automount, .swap, .target, .path, .timer, .slice, .scope)
}
