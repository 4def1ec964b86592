package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	ctrl "sigs.k8s.io/controller-runtime"
)

// initLockRequeue is how often a control-plane machine that did not get the
// init lock, or a worker waiting for the control plane, looks again.
const initLockRequeue = 30 * time.Second

// reconcileInit handles a config while the control plane is not
// initialized: only the control-plane machine holding the init lock gets
// data (kubeadm init); everyone else waits.
func (r *Reconciler) reconcileInit(ctx context.Context, s *scope) (_ ctrl.Result, rerr error) {
	markWaitingForControlPlane(s.config)
	if !s.owner.IsControlPlaneMachine() {
		return ctrl.Result{RequeueAfter: initLockRequeue}, nil
	}
	r.released.Delete(s.cluster.UID)
	if !r.InitLock.Lock(ctx, s.cluster, s.owner.Machine) {
		return ctrl.Result{RequeueAfter: initLockRequeue}, nil
	}
	// Give the lock back when this attempt fails, so another control-plane
	// machine (or this one again) can try.
	defer func() {
		if rerr != nil && !r.InitLock.Unlock(ctx, s.cluster) {
			rerr = errors.Join(rerr, errors.New("failed to release the kubeadm init lock"))
		}
	}()

	ctrl.LoggerFrom(ctx).Info("Creating BootstrapData for the first control plane")
	secrets := r.builder().NewSecrets()
	data, err := r.buildData(ctx, s, secrets)
	if err != nil {
		return r.failed(ctx, s, secrets, true, err)
	}
	// Without a control-plane provider the first machine generates the
	// cluster CAs (bootstrap.Build did) and saves them, owned by its config,
	// with util/secret's conventions (LookupOrGenerateCached).
	owner := *metav1.NewControllerRef(s.config, bootstrapv1.GroupVersion.WithKind("KubeadmConfig"))
	if err := data.Result.Certificates.SaveGenerated(ctx, r.Client, util.ObjectKey(s.cluster), owner); err != nil {
		markCertificatesFailed(s.config, true, err.Error())
		return ctrl.Result{}, fmt.Errorf("save generated cluster certificates: %w", err)
	}
	markCertificatesAvailable(s.config)
	persistDefaults(s.config, data.Result.Config, data.Result.Plan.Role)
	if err := r.store(ctx, s, data); err != nil {
		return ctrl.Result{}, err
	}
	r.reportWarnings(s, data.Output.Warnings)
	return ctrl.Result{}, nil
}
