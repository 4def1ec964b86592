package provisioning_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"

	_ "github.com/nodeboot/nodeboot/provisioning/script" // registers "script"
)

// An RKE2-style agent whose config names the node after its instance
// metadata. The Text says which parts are values; every literal byte, the
// "{{ }}" included, stays as it is. cloud-init fills the values in with its
// jinja; the script has no instance metadata and refuses, naming the field.
func ExampleText() {
	plan := &provisioning.Plan{
		Files: []provisioning.File{{
			Path: "/etc/rancher/rke2/config.yaml", Permissions: "0600",
			Template: provisioning.Text{
				provisioning.Literal("node-name: "), provisioning.Value(provisioning.NodeName),
				provisioning.Literal("\nnode-ip: "), provisioning.Value(provisioning.NodeLocalIPv4),
				provisioning.Literal("\nnode-label: [\"note={{ not a template }}\"]\n"),
			},
		}},
		Commands: []provisioning.Command{{
			Phase: provisioning.PhaseBootstrap,
			Template: provisioning.Text{
				provisioning.Literal("systemctl start rke2-agent && echo joined as "), provisioning.Value(provisioning.NodeName),
			},
		}},
	}
	cc, _ := provisioning.Get("cloud-config")
	out, err := cc.Render(plan, provisioning.Options{})
	if err != nil {
		panic(err)
	}
	first, _, _ := strings.Cut(string(out.Data), "\n")
	fmt.Println(first)
	fmt.Println(strings.Contains(string(out.Data), "{{ v1.local_hostname"))

	sh, _ := provisioning.Get("script")
	_, err = sh.Render(plan, provisioning.Options{})
	var ps provisioning.Problems
	fmt.Println(errors.Is(err, provisioning.ErrUnsupported), errors.As(err, &ps) && ps[0].Path.String() == "files[0].template")
	// Output:
	// ## template: jinja
	// true
	// true true
}
