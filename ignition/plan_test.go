package ignition_test

import (
	"github.com/nodeboot/nodeboot/provisioning"
)

// basePlan is the smallest Plan both dialects render: what bootstrap builds
// for an Ignition join, without the kubeadm specifics.
func basePlan() *provisioning.Plan {
	return &provisioning.Plan{
		Role:     provisioning.RoleJoinWorker,
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
		Files: []provisioning.File{
			{Path: "/etc/app.conf", Permissions: "0644", Content: "app\n", Origin: provisioning.NewPath("spec", "files").Index(0).WithFields()},
			{Path: "/etc/kubeadm.yml", Permissions: "0600", Content: "---\nkind: JoinConfiguration\n", BootstrapInput: true},
		},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePre, Script: "echo pre", Origin: provisioning.NewPath("spec", "preKubeadmCommands").Index(0).WithFields()},
			{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join --config /etc/kubeadm.yml "},
			{Phase: provisioning.PhasePost, Script: "echo post", Origin: provisioning.NewPath("spec", "postKubeadmCommands").Index(0).WithFields()},
		},
	}
}

func ptr[T any](v T) *T { return &v }
