package controllers

import (
	"context"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/nodeboot/nodeboot/controllers/bootstrapdata"
	"github.com/nodeboot/nodeboot/provisioning"
)

// builder is the bootstrapdata.Builder of one reconciliation, over the
// Reconciler's clients: the reconciler gathers objects and decides when to
// act, the Builder reads what the data needs and renders it.
func (r *Reconciler) builder() *bootstrapdata.Builder {
	return &bootstrapdata.Builder{
		Client:              r.Client,
		SecretCachingClient: r.SecretCachingClient,
		APIReader:           r.APIReader,
		Extensions:          r.Extensions,
		Strict:              r.Strict,
	}
}

// buildData builds and renders the data of the config in s.
func (r *Reconciler) buildData(ctx context.Context, s *scope, secrets *bootstrapdata.Secrets) (*bootstrapdata.Data, error) {
	return r.builder().Build(ctx, bootstrapdata.Target{Config: s.config, Owner: s.owner, Cluster: s.cluster}, secrets)
}

// persistDefaults copies into the stored config what CABPK writes back to
// the spec while generating data: the control-plane endpoint of an init, the
// controlPlane stanza of a control-plane join and the discovery defaults
// (CA hashes, API server endpoint, skip-verification) of any join.
func persistDefaults(config *bootstrapv1.KubeadmConfig, built *bootstrapv1.KubeadmConfig, role provisioning.Role) {
	switch role {
	case provisioning.RoleInit:
		config.Spec.ClusterConfiguration.ControlPlaneEndpoint = built.Spec.ClusterConfiguration.ControlPlaneEndpoint
	case provisioning.RoleJoinControlPlane:
		if config.Spec.JoinConfiguration.ControlPlane == nil {
			config.Spec.JoinConfiguration.ControlPlane = &bootstrapv1.JoinControlPlane{}
		}
		fallthrough
	case provisioning.RoleJoinWorker:
		config.Spec.JoinConfiguration.Discovery = *built.Spec.JoinConfiguration.Discovery.DeepCopy()
	}
}
