package provisioning_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/provisioning/script"
)

// dialects are every native provisioner and dialect, by the Options that
// choose them.
var dialects = []struct {
	name string
	r    provisioning.Provisioner
	opts provisioning.Options
}{
	{"cloud-config", &cloudinit.Renderer{}, provisioning.Options{}},
	{"cloud-config cabpk", &cloudinit.Renderer{}, provisioning.Options{Version: provisioning.VersionCABPK}},
	{"ignition", &ignition.Renderer{}, provisioning.Options{}},
	{"ignition cabpk", &ignition.Renderer{}, provisioning.Options{Version: provisioning.VersionCABPK}},
	{"script", &script.Renderer{}, provisioning.Options{}},
}

func okPlan() *provisioning.Plan {
	return &provisioning.Plan{
		Files:    []provisioning.File{{Path: "/etc/rancher/rke2/config.yaml", Permissions: "0600", Content: "a: b\n", Origin: provisioning.NewPath("spec", "serverConfig")}},
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "rke2 server"}},
	}
}

// TestZeroOptionsArePlain: the zero Options render each provisioner's plain
// dialect, and CABPK's dialects are there only when asked for.
func TestZeroOptionsArePlain(t *testing.T) {
	cc, err := (&cloudinit.Renderer{}).Render(okPlan(), provisioning.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(cc.Data, []byte("#cloud-config\n")) || bytes.Contains(cc.Data, []byte("/run/cluster-api/placeholder")) {
		t.Errorf("zero Options rendered CABPK's cloud-config dialect:\n%s", cc.Data)
	}
	cabpk, err := (&cloudinit.Renderer{}).Render(okPlan(), provisioning.Options{Version: provisioning.VersionCABPK})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(cabpk.Data, []byte("## template: jinja\n")) {
		t.Errorf("VersionCABPK did not render CABPK's dialect:\n%s", cabpk.Data)
	}
	ign, err := (&ignition.Renderer{}).Render(okPlan(), provisioning.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct{ Ignition struct{ Version string } }
	if err := json.Unmarshal(ign.Data, &cfg); err != nil || cfg.Ignition.Version != ignition.DefaultVersion {
		t.Errorf("zero Options rendered Ignition %q (%v), want %s", cfg.Ignition.Version, err, ignition.DefaultVersion)
	}
}

// hazardPlan has what makes cloud-init run nothing in CABPK's layout: a
// file with "{{ }}" under its jinja header and a sudo rule with ": ".
func hazardPlan() *provisioning.Plan {
	return &provisioning.Plan{
		Files:    []provisioning.File{{Path: "/etc/app.tmpl", Content: "image: {{ .Values.image }}\n", Origin: provisioning.NewPath("spec", "files").Index(0).WithFields()}},
		Users:    []provisioning.User{{Name: "ops", Sudo: "ALL=(ALL) NOPASSWD: ALL", Origin: provisioning.NewPath("spec", "users").Index(0).WithFields()}},
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join"}},
	}
}

// TestStrictRefusesHazards: in CABPK's cloud-config dialect the hazards are
// warnings, and errors at their fields under Strict; the plain dialect has
// no such hazard.
func TestStrictRefusesHazards(t *testing.T) {
	r := &cloudinit.Renderer{}
	out, err := r.Render(hazardPlan(), provisioning.Options{Version: provisioning.VersionCABPK})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Warnings) == 0 {
		t.Fatal("CABPK's dialect rendered the hazards without a warning")
	}
	strict := provisioning.Options{Version: provisioning.VersionCABPK, Strict: true}
	_, err = r.Render(hazardPlan(), strict)
	var ps provisioning.Problems
	if !errors.As(err, &ps) || !errors.Is(err, provisioning.ErrInvalid) {
		t.Fatalf("Strict rendered the hazards: %v", err)
	}
	for _, want := range []string{"spec.files[0].content", "spec.users[0].sudo"} {
		if !hasPath(ps.Errors(), want) {
			t.Errorf("no error at %s in:\n%v", want, err)
		}
	}
	if c := r.Check(hazardPlan(), strict); c.Err() == nil || len(c.Warnings()) > 0 {
		t.Errorf("Check under Strict: %v", c)
	}
	plain, err := r.Render(hazardPlan(), provisioning.Options{Strict: true})
	if err != nil || len(plain.Warnings) > 0 {
		t.Errorf("the plain dialect under Strict: %v %v", err, plain)
	}
	// A warning of the plain dialect (a schema gap) is an error under Strict.
	gap := okPlan()
	gap.Disks = &provisioning.DiskSetup{Filesystems: []provisioning.Filesystem{{Device: "/dev/vdb", Filesystem: "ext4", Partition: "1"}}}
	if out, err := r.Render(gap, provisioning.Options{}); err != nil || len(out.Warnings) != 1 {
		t.Fatalf("want one warning: %v", err)
	}
	if _, err := r.Render(gap, provisioning.Options{Strict: true}); err == nil {
		t.Error("Strict rendered a plan with a warning")
	}
}

func hasPath(ps provisioning.Problems, path string) bool {
	for _, p := range ps {
		if p.Path.String() == path {
			return true
		}
	}
	return false
}

// TestProblemsAtCallerOrigin: a problem about an element with an Origin
// sits at the Origin exactly, in every provisioner, and one cause gives
// one problem: a duplicate unit is one problem at the later unit, not
// problems at "path" fields the caller's units do not have.
func TestProblemsAtCallerOrigin(t *testing.T) {
	yes := true
	unit := func(i int) provisioning.Unit {
		return provisioning.Unit{Name: "rke2-server.service", Enabled: &yes, Contents: "[Service]\nExecStart=/usr/local/bin/rke2 server\n",
			DropIns: []provisioning.DropIn{{Name: "10-env.conf", Contents: "[Service]\nEnvironment=A=b\n"}},
			Origin:  provisioning.NewPath("spec", "units").Index(i)}
	}
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			bad := okPlan()
			bad.Files[0].Permissions = "rw-r--r--"
			// CABPK's dialects tolerate a bad mode as a warning.
			ps := d.r.Check(bad, d.opts)
			if len(ps) != 1 || ps[0].Path.String() != "spec.serverConfig" {
				t.Errorf("bad permissions: want one error at spec.serverConfig, got:\n%v", ps)
			}
			dup := okPlan()
			dup.Units = []provisioning.Unit{unit(0), unit(1)}
			ps = d.r.Check(dup, d.opts).Errors()
			if d.name == "script" || d.name == "ignition cabpk" || len(ps) != 1 {
				// Some dialects refuse units or drop-ins outright; the
				// duplicate must still be one problem among them.
				n := 0
				for _, p := range ps {
					if strings.Contains(p.Message, "duplicate") {
						n++
					}
				}
				if n != 1 {
					t.Errorf("duplicate unit: want one problem about it, got:\n%v", ps)
				}
			}
			for _, p := range ps {
				if s := p.Path.String(); s != "spec.units[0]" && s != "spec.units[1]" {
					t.Errorf("duplicate unit: problem off the caller's origins: %v", p)
				}
			}
			drop := okPlan()
			u := unit(0)
			u.DropIns[0].Name = "env"
			drop.Units = []provisioning.Unit{u}
			for _, p := range d.r.Check(drop, d.opts).Errors() {
				if p.Path.String() != "spec.units[0]" {
					t.Errorf("bad drop-in: problem off the caller's origin: %v", p)
				}
			}
		})
	}
}

// TestTooLargeIsAProblem: an output over MaxBytes is Problems with one
// problem at the output, matching ErrTooLarge and ErrInvalid.
func TestTooLargeIsAProblem(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			opts := d.opts
			opts.MaxBytes = 16
			_, err := d.r.Render(okPlan(), opts)
			if !errors.Is(err, provisioning.ErrTooLarge) || !errors.Is(err, provisioning.ErrInvalid) {
				t.Fatalf("want ErrTooLarge, got %v", err)
			}
			var ps provisioning.Problems
			if !errors.As(err, &ps) || len(ps) != 1 || !ps[0].Path.Equal(provisioning.OutputPath) || !errors.Is(ps[0], provisioning.ErrTooLarge) {
				t.Fatalf("want one problem at %s, got %#v", provisioning.OutputPath, err)
			}
		})
	}
}
