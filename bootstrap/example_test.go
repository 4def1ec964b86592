package bootstrap_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
)

// Build decides, as CABPK does, that a control-plane Machine of a Cluster
// whose control plane is not initialized runs kubeadm init, and returns the
// Plan; no Kubernetes client is needed.
func ExampleBuild() {
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default"},
		Spec:       clusterv1.ClusterSpec{ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "192.0.2.1", Port: 6443}},
	}
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "cp-0", Namespace: "default", Labels: map[string]string{clusterv1.MachineControlPlaneLabel: ""}},
		Spec:       clusterv1.MachineSpec{ClusterName: "demo", Version: "v1.34.1"},
	}
	config := &bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "cp-0", Namespace: "default"},
		Spec:       bootstrapv1.KubeadmConfigSpec{PreKubeadmCommands: []string{"swapoff -a"}},
	}
	res, err := bootstrap.Build(context.Background(), bootstrap.Input{
		Config: config, Cluster: cluster, Machine: machine,
		Secrets:                     bootstrap.SecretMap{}, // no cluster CAs yet:
		GenerateMissingCertificates: true,                  // generated, returned in res.Certificates
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Format, res.Plan.Role)
	for _, c := range res.Plan.Commands {
		fmt.Printf("%s: %q\n", c.Phase, c.Script)
	}
	fmt.Println(res.Plan.Files[len(res.Plan.Files)-1].Path, len(res.Plan.CommandsIn(provisioning.PhaseBootstrap)))
	// Output:
	// cloud-config init
	// pre: "swapoff -a"
	// bootstrap: "kubeadm init --config /run/kubeadm/kubeadm.yaml "
	// /run/kubeadm/kubeadm.yaml 1
}
