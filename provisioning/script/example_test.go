package script_test

import (
	"fmt"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/script"
)

// A k3s agent's first boot as one shell script: a file, a command that
// installs k3s on an image without it, the join as the bootstrap command,
// and a sentinel written only when the join succeeded.
func Example() {
	plan := &provisioning.Plan{
		Role: provisioning.RoleJoinWorker,
		Files: []provisioning.File{{
			Path: "/etc/rancher/k3s/config.yaml", Permissions: "0600",
			Content: "server: https://192.0.2.10:6443\ntoken-file: /etc/rancher/k3s/token\n",
		}},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePre, Script: "command -v k3s || install-k3s"},
			{Phase: provisioning.PhaseBootstrap, Script: "systemctl enable --now k3s-agent.service"},
		},
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
	}
	p, err := provisioning.Get(script.Format)
	if err != nil {
		panic(err)
	}
	out, err := p.Render(plan, provisioning.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %q...\n", out.Format, out.Data[:10])
	// Output: script: "#!/bin/sh\n"...
}

// Features a shell script cannot express reliably across images are
// errors that match provisioning.ErrUnsupported, never dropped.
func ExampleRenderer_Check() {
	plan := &provisioning.Plan{Mounts: []provisioning.Mount{{"/dev/sdb1", "/data"}}}
	for _, p := range (&script.Renderer{}).Check(plan, provisioning.Options{}) {
		fmt.Println(p)
	}
	// Output: mounts: mounts is not supported by the script provisioner
}
