package controllers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/tools/record"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/locking"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/feature"
	capicontrollerutil "sigs.k8s.io/cluster-api/util/controller"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/nodeboot/nodeboot/controllers/bootstrapdata"
)

// DefaultTokenTTL is how long a bootstrap token is valid unless configured
// otherwise; it is CABPK's default.
const DefaultTokenTTL = 15 * time.Minute

// InitLocker serialises kubeadm init per cluster. The default is CAPI's
// ConfigMap-based locking.ControlPlaneInitMutex, the lock CABPK uses, so the
// two providers respect each other's lock during a swap.
type InitLocker interface {
	Lock(ctx context.Context, cluster *clusterv1.Cluster, machine *clusterv1.Machine) bool
	Unlock(ctx context.Context, cluster *clusterv1.Cluster) bool
}

// Extension lets add-ons take part in building a node's bootstrap data. It
// is the build's extension point, bootstrapdata.Extension, named here too
// because the Reconciler is where the manager wires extensions in.
type Extension = bootstrapdata.Extension

// WatchingExtension is an Extension whose input lives in objects of its own
// kind: a change to one re-reconciles the KubeadmConfigs of the Clusters it
// affects, so a corrected input does not wait for the next resync.
type WatchingExtension interface {
	Extension
	// WatchedObject is an empty object of the kind to watch.
	WatchedObject() client.Object
	// ClustersFor names the Clusters whose bootstrap data obj affects.
	ClustersFor(ctx context.Context, obj client.Object) []client.ObjectKey
}

// WorkloadClients gives clients for workload clusters.
type WorkloadClients interface {
	GetClient(ctx context.Context, cluster client.ObjectKey) (client.Client, error)
}

// Reconciler reconciles KubeadmConfig objects owned by Machines and
// MachinePools into bootstrap data Secrets.
//
// KubeadmConfigTemplates are not reconciled, as in CABPK: they are only read,
// for the nodeboot opt-in annotations of the configs cloned from them.
type Reconciler struct {
	// Client reads through the manager's cache (Secrets and ConfigMaps are
	// not cached, as in CABPK) and writes.
	Client client.Client
	// SecretCachingClient reads Secrets carrying the cluster-name label from
	// the cache; certificates are looked up through it first.
	SecretCachingClient client.Client
	// APIReader reads uncached, e.g. the control-plane object for its
	// version, so no informer is kept for kinds that are otherwise unwatched.
	// Defaults to the manager's API reader.
	APIReader client.Reader
	// ClusterCache gives clients for workload clusters, where bootstrap
	// tokens live: Cluster API's clustercache.ClusterCache or anything
	// lighter. When it is a ClusterCache, its connection events requeue the
	// cluster's configs.
	ClusterCache WorkloadClients
	// InitLock defaults to CAPI's ConfigMap init lock.
	InitLock InitLocker
	// WatchFilterValue is the value of the cluster.x-k8s.io/watch-filter
	// label an object must carry to be reconciled; empty reconciles all.
	WatchFilterValue string
	// TokenTTL is how long a bootstrap token is valid; 0 means DefaultTokenTTL.
	TokenTTL time.Duration
	// Extensions run in order on every build.
	Extensions []Extension
	// Recorder receives a Warning Event per rendering with hazards; nil
	// defaults to the manager's recorder for "nodeboot-kubeadmconfig".
	Recorder record.EventRecorder
	// Strict refuses data with render warnings for every config that does
	// not say otherwise with the nodeboot.dev/strict annotation.
	Strict bool

	// released holds the UIDs of clusters whose init lock this process saw
	// released after initialization; see releaseInitLock.
	released sync.Map
	// superseded maps a config's UID to the resourceVersion of the state its
	// spec patch produced, which the status patch right after superseded;
	// see Reconcile.
	superseded sync.Map
}

// Cluster API kinds and core resources read or written by the reconciler.
// Least privilege: nothing here is deleted except the init lock ConfigMap,
// KubeadmConfigs are never created, Secrets never deleted.
//
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=kubeadmconfigs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=kubeadmconfigs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=kubeadmconfigs/finalizers,verbs=update
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=kubeadmconfigtemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machines;machinepools;machinesets,verbs=get;list;watch
// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=kubeadmcontrolplanes,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager registers the reconciler with the same watches as CABPK:
// KubeadmConfigs, their Machines and MachinePools, Clusters (on pause
// transitions and infrastructure readiness) and workload-cluster connections.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.SecretCachingClient == nil || r.ClusterCache == nil {
		return errors.New("kubeadmconfig reconciler: Client, SecretCachingClient and ClusterCache must be set")
	}
	if r.InitLock == nil {
		r.InitLock = locking.NewControlPlaneInitMutex(mgr.GetClient())
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.TokenTTL == 0 {
		r.TokenTTL = DefaultTokenTTL
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("nodeboot-kubeadmconfig") //nolint:staticcheck // CAPI's reconcilers use the core/v1 recorder too.
	}

	log := ctrl.LoggerFrom(ctx).WithValues("controller", "kubeadmconfig")
	b := capicontrollerutil.NewControllerManagedBy(mgr, log).
		// Metadata only: a cached KubeadmConfig is ~4.6 KiB of heap (its
		// spec type alone is 1.5 KiB), its metadata a fifth of that, and a
		// reconcile reads the config whole anyway (Reconcile). At 5,000
		// configs that is ~18 MiB of live heap for one GET per reconcile.
		For(&bootstrapv1.KubeadmConfig{}, builder.OnlyMetadata).
		WithOptions(options).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.machineToConfig)).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue))
	if feature.Gates.Enabled(feature.MachinePool) {
		b = b.Watches(&clusterv1.MachinePool{}, handler.EnqueueRequestsFromMapFunc(r.machinePoolToConfig))
	}
	b = b.Watches(
		&clusterv1.Cluster{},
		handler.EnqueueRequestsFromMapFunc(r.clusterToConfigs),
		predicates.ClusterPausedTransitionsOrInfrastructureProvisioned(mgr.GetScheme(), log),
		predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue),
	)
	if cc, ok := r.ClusterCache.(clustercache.ClusterCache); ok {
		b = b.WatchesRawSource(cc.GetClusterSource("kubeadmconfig", r.clusterToConfigs))
	}
	for _, e := range r.Extensions {
		if w, ok := e.(WatchingExtension); ok {
			b = b.Watches(w.WatchedObject(), handler.EnqueueRequestsFromMapFunc(r.extensionToConfigs(w)))
		}
	}
	if err := b.Complete(ctx, r); err != nil {
		return fmt.Errorf("set up kubeadmconfig controller: %w", err)
	}
	return nil
}

// tokenRefreshSkipWindow: a token expiring later than now plus this needs no
// refresh yet. Reconciles come every tokenCheckInterval, so a token gets two
// chances to be refreshed before it expires (CABPK's choice).
func (r *Reconciler) tokenRefreshSkipWindow() time.Duration { return r.TokenTTL * 5 / 6 }

// tokenCheckInterval is how often a config whose token is not consumed yet is
// reconciled again.
func (r *Reconciler) tokenCheckInterval() time.Duration { return r.TokenTTL / 3 }
