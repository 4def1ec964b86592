package addons_test

import (
	"fmt"

	"github.com/nodeboot/nodeboot/addons"
	"github.com/nodeboot/nodeboot/addons/catalog"
	"github.com/nodeboot/nodeboot/provisioning"
)

// A bootstrap provider that builds its own Plan adds a built-in add-on to the
// first control-plane node.
func ExampleContribute() {
	flannel, err := catalog.Render(catalog.Flannel, "", catalog.Params{PodCIDR: "10.244.0.0/16"})
	if err != nil {
		panic(err)
	}
	plan := &provisioning.Plan{
		Role:     provisioning.RoleInit,
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "k3s server"}},
	}
	err = addons.Contribute(plan, []addons.Addon{{Name: "cni", Version: flannel.Version, Manifest: flannel.Manifest}}, addons.Options{})
	if err != nil {
		panic(err)
	}
	for _, f := range plan.Files {
		fmt.Println(f.Path, f.Permissions)
	}
	fmt.Println(plan.Commands[1].Phase, plan.Commands[1].Script[:40])
	// Output:
	// /etc/kubernetes/addons/000-cni.yaml 0600
	// /etc/kubernetes/addons/addons.list 0600
	// /etc/kubernetes/addons/apply.sh 0700
	// post /bin/sh /etc/kubernetes/addons/apply.sh
}
