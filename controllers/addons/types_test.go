package addons

import (
	"context"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/bootstrap"
)

type (
	ctxT           = context.Context
	clusterT       = *clusterv1.Cluster
	configT        = *bootstrapv1.KubeadmConfig
	resultT        = *bootstrap.Result
	clientObject   = client.Object
	bootstrapInput = bootstrap.Input
)

// Cluster API's cluster cache gives the reconciler its workload clients.
var _ WorkloadClusters = clustercache.ClusterCache(nil)
