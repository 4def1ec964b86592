package bootstrapdata

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/internal/objname"
	"github.com/nodeboot/nodeboot/provisioning"
)

// Rebuilder renders the bootstrap data of KubeadmConfigs that already have
// it, from the objects Reader returns, with the reconciler's own Builder:
// the same owner, Cluster, control-plane version, certificate,
// contentFrom/passwdFrom and template look-ups, the same extensions. It is
// what `nodeboot verify` compares stored Secrets with.
//
// It cannot write: it holds only a client.Reader, certificates that are
// missing are reported instead of generated (Builder.Rebuild), and a join
// without a token is reported instead of getting one.
type Rebuilder struct {
	// Reader reads the management cluster; a ListReader keeps it to list calls.
	Reader client.Reader
	// Extensions run as in the manager (the add-on extension when the
	// FirstBootAddon API is served).
	Extensions []Extension
	// Strict is the manager's --strict flag.
	Strict bool
	// Reporter rebuilds the bootstrap reporter of configs whose data
	// carries one: the manager's report extension, set to embed each
	// config's stored credential instead of minting one. It runs first,
	// as in the manager, and only for configs that have a credential
	// Secret of their own: data written before reporting was turned on
	// has no reporter. Nil fails those configs with ErrReporter.
	Reporter Extension
}

// RebuildOptions adjust one rebuild.
type RebuildOptions struct {
	// AsInit renders a control-plane Machine's config as the first control
	// plane even though its Cluster is initialized now. Which role CABPK
	// rendered is decided by ControlPlaneInitialized at the time, which the
	// live objects no longer show once the init node came up.
	AsInit bool
}

// Rebuilt is a rendered stored config.
type Rebuilt struct {
	Output *provisioning.Output
	Role   provisioning.Role
	// MayBeInit tells that the config belongs to a control-plane Machine of
	// an initialized Cluster: its data may have been rendered for kubeadm
	// init (RebuildOptions.AsInit) rather than for a control-plane join.
	MayBeInit bool
}

// Rebuild renders config again. Configs the reconciler would not touch, or
// that have no data, return an error matching ErrSkipped; anything else that
// fails is what the reconciler would have reported (field paths, never
// values), with a Rebuilt that has no Output when the build itself failed.
func (b *Rebuilder) Rebuild(ctx context.Context, config *bootstrapv1.KubeadmConfig, opts RebuildOptions) (*Rebuilt, error) {
	if config.Status.DataSecretName == "" {
		return nil, ErrNoData
	}
	if !config.DeletionTimestamp.IsZero() {
		return nil, ErrDeleting
	}
	exts := b.Extensions
	switch reporting, err := b.hasReporter(ctx, config); {
	case err != nil:
		return nil, err
	case reporting && b.Reporter == nil:
		return nil, ErrReporter
	case reporting:
		exts = append([]Extension{b.Reporter}, b.Extensions...)
	}
	owner, err := GetOwner(ctx, b.Reader, config)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: %s", ErrOwnerGone, ownerRefs(config))
		}
		return nil, fmt.Errorf("get owner of KubeadmConfig %s: %w", klog.KObj(config), err)
	}
	if owner == nil {
		return nil, ErrNoOwner
	}
	clusterRef := klog.KRef(config.Namespace, owner.ClusterName())
	cluster := &clusterv1.Cluster{}
	if err := b.Reader.Get(ctx, client.ObjectKey{Namespace: config.Namespace, Name: owner.ClusterName()}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: Cluster %s", ErrClusterGone, clusterRef)
		}
		return nil, fmt.Errorf("get Cluster %s: %w", clusterRef, err)
	}
	if annotations.IsPaused(cluster, config) {
		return nil, fmt.Errorf("%w: Cluster %s or KubeadmConfig %s", ErrPaused, klog.KObj(cluster), klog.KObj(config))
	}
	initialized := conditions.IsTrue(cluster, clusterv1.ClusterControlPlaneInitializedCondition)
	out := &Rebuilt{MayBeInit: initialized && owner.IsControlPlaneMachine()}
	if opts.AsInit && out.MayBeInit {
		cluster = cluster.DeepCopy()
		conditions.Set(cluster, metav1.Condition{
			Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: metav1.ConditionFalse, Reason: "Rebuilding",
		})
	}
	builder := &Builder{Client: b.Reader, SecretCachingClient: b.Reader, APIReader: b.Reader, Extensions: exts, Strict: b.Strict, Rebuild: true}
	data, err := builder.Build(ctx, Target{Config: config, Owner: owner, Cluster: cluster}, builder.NewSecrets())
	if err != nil {
		// MayBeInit still tells whether an init rebuild is worth a try.
		return out, err
	}
	out.Output, out.Role = data.Output, data.Result.Plan.Role
	return out, nil
}

// hasReporter tells whether config's data was written with a bootstrap
// reporter: its credential Secret exists and is the config's.
func (b *Rebuilder) hasReporter(ctx context.Context, config *bootstrapv1.KubeadmConfig) (bool, error) {
	key := client.ObjectKey{Namespace: config.Namespace, Name: objname.WithSuffix(config.Name, nodebootv1.BootstrapReportSecretSuffix)}
	s := &corev1.Secret{}
	switch err := b.Reader.Get(ctx, key, s); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("get Secret %s: %w", klog.KRef(key.Namespace, key.Name), err)
	}
	return s.Type == nodebootv1.BootstrapReportSecretType && ConfigControls(config, s), nil
}

func ownerRefs(config *bootstrapv1.KubeadmConfig) string {
	for _, ref := range config.OwnerReferences {
		if ref.Kind == "Machine" || ref.Kind == "MachinePool" {
			return ref.Kind + " " + klog.KRef(config.Namespace, ref.Name).String() + " not found"
		}
	}
	return "not found"
}
