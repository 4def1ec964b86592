package cloudinit_test

import (
	"fmt"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
)

// CABPK's layout is rendered byte for byte, and its hazards are reported by
// field; Options.Corrections renders output that avoids them.
func ExampleRenderer_Render() {
	plan := &provisioning.Plan{
		Role:     provisioning.RoleJoinWorker,
		Files:    []provisioning.File{{Path: "/etc/app.tmpl", Content: "{{ .Values }}\n", Origin: provisioning.NewPath("spec", "files").Index(0).WithFields()}},
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml "}},
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
	}
	r := &cloudinit.Renderer{}
	out, err := r.Render(plan, provisioning.Options{Version: provisioning.VersionCABPK})
	if err != nil {
		panic(err)
	}
	for _, w := range out.Warnings {
		fmt.Println("warning:", w.Path)
	}
	fixed, err := r.Render(plan, provisioning.Options{Version: provisioning.VersionCABPK, Corrections: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Format, len(fixed.Warnings), "warnings with corrections")
	// Output:
	// warning: spec.files[0].content
	// cloud-config 0 warnings with corrections
}
