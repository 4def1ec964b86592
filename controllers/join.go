package controllers

import (
	"context"
	"errors"
	"fmt"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/nodeboot/nodeboot/bootstrap"
)

// reconcileJoin produces the data of a node joining an initialized cluster,
// control plane or worker. A join by bootstrap token without a token gets
// one created in the workload cluster first — only once the build got that
// far, so certificates and the endpoint are checked before, as in CABPK.
func (r *Reconciler) reconcileJoin(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if s.owner.IsControlPlaneMachine() {
		log.Info("Creating BootstrapData for the joining control plane")
	} else {
		log.Info("Creating BootstrapData for the worker node")
	}
	secrets := r.builder().NewSecrets()
	data, err := r.buildData(ctx, s, secrets)
	if errors.Is(err, bootstrap.ErrNoBootstrapToken) {
		token, terr := r.createToken(ctx, s.cluster)
		if terr != nil {
			return ctrl.Result{}, fmt.Errorf("create bootstrap token: %w", terr)
		}
		// The token goes into the stored spec (the deferred patch writes
		// it even when the build below fails), so it is created only once.
		s.config.Spec.JoinConfiguration.Discovery.BootstrapToken.Token = token
		log.V(3).Info("Altering JoinConfiguration.Discovery.BootstrapToken.Token")
		data, err = r.buildData(ctx, s, secrets)
	}
	if err != nil {
		return r.failed(ctx, s, secrets, false, err)
	}
	markCertificatesAvailable(s.config)
	persistDefaults(s.config, data.Result.Config, data.Result.Plan.Role)
	if err := r.store(ctx, s, data); err != nil {
		return ctrl.Result{}, err
	}
	r.reportWarnings(s, data.Output.Warnings)
	// Come back to refresh the token until the node consumed it.
	return ctrl.Result{RequeueAfter: r.tokenCheckInterval()}, nil
}

// releaseInitLock deletes the init lock once the control plane is
// initialized, as CABPK does on every join. CABPK reads the (uncached)
// ConfigMap on every join reconcile; once this process saw the lock gone for
// an initialized cluster it stops looking, because only an init attempt —
// which forgets that again — creates the lock. Failures are logged by the
// lock and retried on the next join.
func (r *Reconciler) releaseInitLock(ctx context.Context, cluster *clusterv1.Cluster) {
	if _, ok := r.released.Load(cluster.UID); ok {
		return
	}
	if r.InitLock.Unlock(ctx, cluster) {
		r.released.Store(cluster.UID, struct{}{})
	}
}
