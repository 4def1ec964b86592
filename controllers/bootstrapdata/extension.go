package bootstrapdata

import (
	"context"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/nodeboot/nodeboot/bootstrap"
)

// Extension lets add-ons take part in building a node's bootstrap data. With
// no extension configured the output is exactly CABPK's.
type Extension interface {
	// MutateConfig may change the KubeadmConfig copy before bootstrap.Build (e.g. kubelet settings).
	MutateConfig(ctx context.Context, cluster *clusterv1.Cluster, config *bootstrapv1.KubeadmConfig) error
	// MutatePlan may add files/commands to the built plan before rendering (e.g. add-on manifests on the init node).
	MutatePlan(ctx context.Context, cluster *clusterv1.Cluster, config *bootstrapv1.KubeadmConfig, result *bootstrap.Result) error
}
