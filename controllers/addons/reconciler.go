package addons

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

// WorkloadClusters gives access to workload clusters. Cluster API's
// clustercache.ClusterCache implements it.
type WorkloadClusters interface {
	GetUncachedClient(ctx context.Context, cluster client.ObjectKey) (client.Client, error)
}

// DefaultRequeueAfter is how often a FirstBootAddon is looked at again while
// some Cluster has not reported yet.
const DefaultRequeueAfter = time.Minute

// FirstBootAddonReconciler validates FirstBootAddons and reports, per
// selected Cluster, what its init node recorded.
type FirstBootAddonReconciler struct {
	Client client.Client
	// APIReader reads, uncached, the metadata of a Cluster's bootstrap
	// data Secrets, for the add-ons its init data carried (carried.go): the
	// manager's cache drops their annotations. Nil uses Client.
	APIReader client.Reader
	// Workloads reads workload clusters; nil disables per-Cluster reports
	// (every Cluster then stays Unknown).
	Workloads WorkloadClusters
	// RequeueAfter defaults to DefaultRequeueAfter.
	RequeueAfter time.Duration
}

// Least privilege: FirstBootAddons are only read, and only their status is
// written (a merge patch); ConfigMaps and Secrets are only read.
//
// +kubebuilder:rbac:groups=addons.nodeboot.dev,resources=firstbootaddons,verbs=get;list;watch
// +kubebuilder:rbac:groups=addons.nodeboot.dev,resources=firstbootaddons/status,verbs=get;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps;secrets,verbs=get;list;watch

// SetupWithManager registers the reconciler; Cluster, ConfigMap and Secret
// changes requeue the add-ons they concern.
func (r *FirstBootAddonReconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&addonsv1.FirstBootAddon{}).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.addonsInNamespace(nil))).
		// Metadata only: the mapping needs names, the Resolver reads the
		// one ConfigMap it uses uncached, and a management cluster's
		// ConfigMaps (ClusterResourceSet manifests among them) can hold
		// megabytes that a full watch would keep in memory.
		WatchesMetadata(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.addonsInNamespace(usesSource(addonsv1.ManifestsConfigMap)))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.addonsInNamespace(usesSource(addonsv1.ManifestsSecret)))).
		WithOptions(opts).
		Named("firstbootaddon").
		Complete(r)
}

func usesSource(kind addonsv1.ManifestKind) func(*addonsv1.FirstBootAddon, client.Object) bool {
	return func(a *addonsv1.FirstBootAddon, o client.Object) bool {
		m := a.Spec.Manifests
		return m != nil && m.Kind == kind && m.Name == o.GetName()
	}
}

func (r *FirstBootAddonReconciler) addonsInNamespace(match func(*addonsv1.FirstBootAddon, client.Object) bool) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var list addonsv1.FirstBootAddonList
		if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "list FirstBootAddons", "namespace", o.GetNamespace())
			return nil
		}
		var out []reconcile.Request
		for i := range list.Items {
			if match == nil || match(&list.Items[i], o) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		}
		return out
	}
}

// Reconcile implements reconcile.Reconciler.
func (r *FirstBootAddonReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	a := &addonsv1.FirstBootAddon{}
	if err := r.Client.Get(ctx, req.NamespacedName, a); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("FirstBootAddon", klog.KObj(a))
	ctx = ctrl.LoggerInto(ctx, log)
	if !a.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := a.DeepCopy()
	defer func() {
		a.Status.ObservedGeneration = a.Generation
		if err := r.Client.Status().Patch(ctx, a, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
			reterr = kerrors.NewAggregate([]error{reterr, fmt.Errorf("patch status of %s: %w", objectRef(a), err)})
		}
	}()

	resolver := &Resolver{Client: r.Client}
	if !r.reconcileSource(ctx, resolver, a) {
		return ctrl.Result{}, nil
	}
	pending, err := r.reconcileClusters(ctx, resolver, a)
	if err != nil {
		return ctrl.Result{}, err
	}
	if pending {
		return ctrl.Result{RequeueAfter: r.requeueAfter()}, nil
	}
	return ctrl.Result{}, nil
}

func (r *FirstBootAddonReconciler) requeueAfter() time.Duration {
	if r.RequeueAfter > 0 {
		return r.RequeueAfter
	}
	return DefaultRequeueAfter
}

// reconcileSource sets SourceValid and the digest; false stops the reconcile.
func (r *FirstBootAddonReconciler) reconcileSource(ctx context.Context, resolver *Resolver, a *addonsv1.FirstBootAddon) bool {
	sum, err := resolver.Summarize(ctx, a)
	var se *SpecError
	switch {
	case errors.As(err, &se):
		setCondition(a, addonsv1.SourceValidCondition, metav1.ConditionFalse, se.Reason, se.Errs.ToAggregate().Error())
		setCondition(a, addonsv1.AppliedCondition, metav1.ConditionUnknown, addonsv1.SourceInvalidReason, "nothing is delivered while the source is invalid")
		a.Status.Digest, a.Status.Version = "", ""
		return false
	case err != nil:
		setCondition(a, addonsv1.SourceValidCondition, metav1.ConditionUnknown, addonsv1.InvalidSpecReason, err.Error())
		return false
	}
	a.Status.Source, a.Status.Version, a.Status.Digest = sum.Source, sum.Version, sum.Digest
	setCondition(a, addonsv1.SourceValidCondition, metav1.ConditionTrue, addonsv1.ValidReason, "")
	return true
}

func setCondition(a *addonsv1.FirstBootAddon, t string, s metav1.ConditionStatus, reason, msg string) {
	if len(msg) > maxConditionMessage {
		// metav1.Condition's bound: one Cluster's failure each, many
		// Clusters, and the whole status write would be refused.
		cut := maxConditionMessage - len(" …")
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + " …"
	}
	meta.SetStatusCondition(&a.Status.Conditions, metav1.Condition{
		Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: a.Generation,
	})
}

// maxConditionMessage is metav1.Condition's bound on Message.
const maxConditionMessage = 32768
