package cloudinit_test

import (
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
)

// TestCABPKMultiLineBootstrap: CABPK's dialect writes the bootstrap command
// as one single-quoted scalar, which a YAML parser (cloud-init's is another)
// reads back with its line break folded into a space, so the node would run
// another command. The renderer keeps CABPK's bytes and warns at the command.
func TestCABPKMultiLineBootstrap(t *testing.T) {
	p := workerPlan()
	p.Commands[0].Script = "if true\nthen kubeadm join; fi"
	out, err := (&cloudinit.Renderer{}).Render(p, provisioning.Options{Version: cloudinit.VersionCABPK})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runcmd []string `yaml:"runcmd"`
	}
	if err := yaml.Unmarshal(out.Data, &doc); err != nil {
		t.Fatal(err)
	}
	want := "if true then kubeadm join; fi && echo success > " + p.Sentinel
	if len(doc.Runcmd) == 0 || doc.Runcmd[len(doc.Runcmd)-1] != want {
		t.Fatalf("runcmd reads back as %q, want the folded %q", doc.Runcmd, want)
	}
	at := p.CommandPath(0).String()
	for _, w := range out.Warnings {
		if w.Path.String() == at {
			return
		}
	}
	t.Fatalf("no warning at %s: %v", at, out.Warnings)
}
