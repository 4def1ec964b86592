package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/conditions"
	clog "sigs.k8s.io/cluster-api/util/log"
	"sigs.k8s.io/cluster-api/util/paused"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/controllers/bootstrapdata"
)

// scope is what one reconciliation works on.
type scope struct {
	config  *bootstrapv1.KubeadmConfig
	owner   *bootstrapdata.Owner
	cluster *clusterv1.Cluster
}

// Reconcile has the fixed shape of Cluster API reconcilers: get the object,
// resolve owner and cluster, enrich the logger, set up the patch helper with
// a deferred patch (see patchConfig), skip deleted objects, then run the phases.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, rerr error) {
	log := ctrl.LoggerFrom(ctx)

	// The cache holds KubeadmConfigs' metadata only (see SetupWithManager);
	// the whole config is read from the API server once that says it is
	// worth reconciling.
	cached := configMetadata()
	if err := r.Client.Get(ctx, req.NamespacedName, cached); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	// The event of our own spec patch can arrive before the status patch
	// that followed it reached the cache. That intermediate state is known
	// to be superseded; reconciling it would render the data a second time.
	if rv, ok := r.superseded.Load(cached.UID); ok {
		if rv == cached.ResourceVersion {
			return ctrl.Result{}, nil
		}
		r.superseded.Delete(cached.UID)
	}
	config := &bootstrapv1.KubeadmConfig{}
	if err := r.configReader().Get(ctx, req.NamespacedName, config); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}

	owner, err := bootstrapdata.GetOwner(ctx, r.Client, config)
	if err != nil {
		if apierrors.IsNotFound(err) {
			// The owner reference is set before the owner is in the cache;
			// its creation event brings us back.
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get owner of KubeadmConfig %s: %w", klog.KObj(config), err)
	}
	if owner == nil {
		return ctrl.Result{}, nil
	}
	log = log.WithValues(owner.Kind(), klog.KObj(owner.Object()), "resourceVersion", owner.Object().GetResourceVersion())
	ctx = ctrl.LoggerInto(ctx, log)
	if owner.Machine != nil {
		// Adds the MachineSet, MachineDeployment or KubeadmControlPlane.
		if ctx, log, err = clog.AddOwners(ctx, r.Client, owner.Machine); err != nil {
			return ctrl.Result{}, err
		}
	}
	log = log.WithValues("Cluster", klog.KRef(config.Namespace, owner.ClusterName()))
	ctx = ctrl.LoggerInto(ctx, log)

	cluster, err := util.GetClusterByName(ctx, r.Client, config.Namespace, owner.ClusterName())
	if err != nil {
		if apierrors.IsNotFound(err) {
			log.Info("Cluster does not exist yet, waiting until it is created")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}

	before := config.DeepCopy()
	if annotations.IsPaused(cluster, config) {
		// Pausing writes the Paused condition right away, exactly as CABPK.
		_, _, err := paused.EnsurePausedCondition(ctx, r.Client, cluster, config)
		return ctrl.Result{}, err
	}
	// Not paused: the Paused=False condition goes out with the status patch
	// below instead of a patch (and a reconcile) of its own.
	setNotPaused(config)
	defer func() {
		rerr = r.patchConfig(ctx, before, config, rerr)
	}()

	if !config.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	return r.reconcile(ctx, &scope{config: config, owner: owner, cluster: cluster})
}

// configMetadata is what the cache keeps of a KubeadmConfig.
func configMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(bootstrapv1.GroupVersion.WithKind("KubeadmConfig"))
	return m
}

// configReader reads whole KubeadmConfigs: the API server, unless the
// Reconciler was built without a manager and only has its Client.
func (r *Reconciler) configReader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

// reconcile decides which phase the config is in, in CABPK's order.
func (r *Reconciler) reconcile(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	config, cluster := s.config, s.cluster

	if err := r.ensureSecretOwnerRef(ctx, config); err != nil {
		return ctrl.Result{}, err
	}

	switch {
	case !ptr.Deref(cluster.Status.Initialization.InfrastructureProvisioned, false):
		log.Info("Cluster infrastructure is not ready, waiting")
		markWaitingForInfrastructure(config)
		return ctrl.Result{}, nil

	// The owner already points at a Secret but our status does not: the
	// status was lost (a move to another management cluster, a restore).
	case s.owner.DataSecretName() != nil && (!ptr.Deref(config.Status.Initialization.DataSecretCreated, false) || config.Status.DataSecretName == ""):
		config.Status.Initialization.DataSecretCreated = ptr.To(true)
		config.Status.DataSecretName = *s.owner.DataSecretName()
		markDataSecretAvailable(config)
		markCertificatesAvailable(config)
		return ctrl.Result{}, nil

	case ptr.Deref(config.Status.Initialization.DataSecretCreated, false):
		markDataSecretAvailable(config)
		markCertificatesAvailable(config)
		if !config.Spec.JoinConfiguration.Discovery.BootstrapToken.IsDefined() {
			return ctrl.Result{}, nil
		}
		if !s.owner.HasNodeRefs() {
			// The node has not joined: keep its token alive.
			return r.refreshToken(ctx, s)
		}
		if s.owner.IsMachinePool() {
			// Pools scale up later with the same data: keep a fresh token.
			return r.rotateToken(ctx, s)
		}
		return ctrl.Result{}, nil
	}

	// Absent counts as not initialized.
	if !conditions.IsTrue(cluster, clusterv1.ClusterControlPlaneInitializedCondition) {
		return r.reconcileInit(ctx, s)
	}
	r.releaseInitLock(ctx, cluster)
	return r.reconcileJoin(ctx, s)
}

// setNotPaused sets the Paused condition of an object that is not paused,
// with exactly the content paused.EnsurePausedCondition would write.
func setNotPaused(config *bootstrapv1.KubeadmConfig) {
	conditions.Set(config, metav1.Condition{
		Type:               clusterv1.PausedCondition,
		Status:             metav1.ConditionFalse,
		Reason:             clusterv1.NotPausedReason,
		ObservedGeneration: config.GetGeneration(),
	})
}
