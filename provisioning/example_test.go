package provisioning_test

import (
	"fmt"

	"github.com/nodeboot/nodeboot/provisioning"

	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit" // registers "cloud-config"
)

// A bootstrap provider that is not kubeadm-shaped (here a k3s agent) builds a
// Plan and renders it with any registered provisioner.
func Example() {
	plan := &provisioning.Plan{
		Role: provisioning.RoleJoinWorker,
		Files: []provisioning.File{{
			Path: "/etc/rancher/k3s/config.yaml", Permissions: "0600",
			Content: "server: https://192.0.2.10:6443\ntoken-file: /etc/rancher/k3s/token\n",
		}},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhaseBootstrap, Script: "k3s agent --config /etc/rancher/k3s/config.yaml"},
		},
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
	}
	p, err := provisioning.Get("cloud-config")
	if err != nil {
		panic(err)
	}
	out, err := p.Render(plan, provisioning.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Format, len(out.Warnings), "warnings")
	// Output: cloud-config 0 warnings
}
