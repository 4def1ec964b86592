package nodereport_test

import (
	"fmt"

	"github.com/nodeboot/nodeboot/nodereport"
	"github.com/nodeboot/nodeboot/provisioning"
)

// A cloud-init Plan with one preKubeadmCommand: the reporter reports
// started, checks each command's status without changing it, and finishes.
func ExampleApply() {
	plan := &provisioning.Plan{
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePre, Script: "apt-get install -y jq", Origin: provisioning.NewPath("spec", "preKubeadmCommands").Index(0)},
			{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml"},
		},
	}
	err := nodereport.Apply(plan, nodereport.Options{
		URL:        "https://mgmt.example:9445/nodeboot/v1/report/default/worker-0",
		Credential: "Zm9yLWV4YW1wbGUtb25seS1ub3QtYS1yZWFsLWNyZWRlbnRpYWw",
		Target:     nodereport.CloudInit,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range plan.Commands {
		fmt.Printf("%-9s %s\n", c.Phase, c.Script)
	}
	// Output:
	// pre       sh /opt/nodeboot/bin/nodeboot-report started
	// pre       apt-get install -y jq
	// pre       sh /opt/nodeboot/bin/nodeboot-report check "$?" 'preKubeadmCommands[0]'
	// bootstrap kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml
	// post      sh /opt/nodeboot/bin/nodeboot-report check "$?" 'kubeadm'
	// post      sh /opt/nodeboot/bin/nodeboot-report finish "$?"
}
