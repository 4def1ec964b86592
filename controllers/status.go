package controllers

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

// The conditions are CABPK's API constants (bootstrapv1.KubeadmConfig*):
// Ready summarises DataSecretAvailable and CertificatesAvailable, and each
// has its deprecated v1beta1 twin. Every change of them goes through the
// helpers below, one per state, so a phase names the state it reached and
// never repeats a condition block.

// SetReady sets the KubeadmConfig's Ready condition as CABPK does, from
// DataSecretAvailable and CertificatesAvailable, and also from
// NodeBootstrapped when the node reported a failure: the Machine mirrors
// Ready as BootstrapConfigReady, which is where an operator looks. A node
// that is still booting or has succeeded leaves Ready exactly CABPK's.
func SetReady(config *bootstrapv1.KubeadmConfig) error {
	types := conditions.ForConditionTypes{
		bootstrapv1.KubeadmConfigDataSecretAvailableCondition,
		bootstrapv1.KubeadmConfigCertificatesAvailableCondition,
	}
	if c := conditions.Get(config, nodebootv1.NodeBootstrappedCondition); c != nil && c.Reason == nodebootv1.BootstrapFailedReason {
		types = append(types, nodebootv1.NodeBootstrappedCondition)
	}
	return conditions.SetSummaryCondition(config, config, bootstrapv1.KubeadmConfigReadyCondition, types,
		conditions.CustomMergeStrategy{
			MergeStrategy: conditions.DefaultMergeStrategy(
				conditions.ComputeReasonFunc(conditions.GetDefaultComputeMergeReasonFunc(
					bootstrapv1.KubeadmConfigNotReadyReason,
					bootstrapv1.KubeadmConfigReadyUnknownReason,
					bootstrapv1.KubeadmConfigReadyReason,
				)),
			),
		},
	)
}

// patchConfig summarises the conditions and writes the config back; it is
// deferred by Reconcile. It is CAPI's patch helper cut down to what this
// reconciler needs, in the order that costs the fewest writes: metadata and
// spec first (a new bootstrap token, CABPK's discovery defaults), then the
// status in one merge patch — conditions included — with observedGeneration
// (on success) taken from the spec patch's response. The patch helper
// instead patches conditions, spec and status separately and records the
// generation from before the spec patch, which costs CABPK up to three
// writes per reconcile and a second reconcile only to move
// observedGeneration. The status has a second writer, the report handler
// (NodeBootstrapped, and Ready with it), so the status patch is optimistic:
// see patchStatus.
func (r *Reconciler) patchConfig(ctx context.Context, before, config *bootstrapv1.KubeadmConfig, rerr error) error {
	v1beta1conditions.SetSummary(config, v1beta1conditions.WithConditions(
		bootstrapv1.DataSecretAvailableV1Beta1Condition,
		bootstrapv1.CertificatesAvailableV1Beta1Condition,
	))
	if err := SetReady(config); err != nil {
		rerr = errors.Join(rerr, err)
	}

	// Metadata and spec.
	intermediate := ""
	var latest *bootstrapv1.KubeadmConfig
	specBefore, specAfter := before.DeepCopy(), config.DeepCopy()
	specBefore.Status, specAfter.Status = bootstrapv1.KubeadmConfigStatus{}, bootstrapv1.KubeadmConfigStatus{}
	if data, err := client.MergeFrom(specBefore).Data(specAfter); err != nil {
		return errors.Join(rerr, err)
	} else if string(data) != "{}" {
		if err := r.Client.Patch(ctx, specAfter, client.RawPatch(types.MergePatchType, data)); err != nil {
			return errors.Join(rerr, fmt.Errorf("patch KubeadmConfig %s: %w", klog.KObj(config), err))
		}
		config.Generation, config.ResourceVersion = specAfter.Generation, specAfter.ResourceVersion
		intermediate = specAfter.ResourceVersion
		// conditions.Set stamped the old generation; what they say holds
		// for the spec just written (CABPK's next reconcile would restamp).
		for i := range config.Status.Conditions {
			config.Status.Conditions[i].ObservedGeneration = config.Generation
		}
		// The response carries the status as it is now, at the version
		// the status patch is checked against.
		latest = specAfter
	}

	// Status.
	if rerr == nil {
		config.Status.ObservedGeneration = config.Generation
	}
	if err := r.patchStatus(ctx, before, config, latest); err != nil {
		if !apierrors.IsNotFound(err) {
			rerr = errors.Join(rerr, fmt.Errorf("patch status of KubeadmConfig %s: %w", klog.KObj(config), err))
		}
		return rerr
	}
	if intermediate != "" {
		r.superseded.Store(config.UID, intermediate)
	}
	return rerr
}

// maxStatusAttempts bounds the status writes of one reconcile among
// conflicting writers.
const maxStatusAttempts = 5

// patchStatus writes the status this reconcile computed from before,
// checked against the resourceVersion it is based on: a merge patch
// replaces the whole conditions list, so a patch over a stale read would
// drop a node's report written meanwhile. When the status changed under us
// (latest, given or read after a conflict), this reconcile's changes are
// carried over onto it (mergeStatus) and the write is tried again. A patch
// changing nothing is not sent.
func (r *Reconciler) patchStatus(ctx context.Context, before, config, latest *bootstrapv1.KubeadmConfig) error {
	for attempt := 0; ; attempt++ {
		base := config.DeepCopy()
		base.Status = before.Status
		if latest != nil {
			mergeStatus(before, config, latest)
			base.Status = latest.Status
			config.ResourceVersion = latest.ResourceVersion
		}
		base.ResourceVersion = config.ResourceVersion
		if data, err := client.MergeFrom(base).Data(config); err != nil {
			return err
		} else if string(data) == "{}" {
			return nil
		}
		err := r.Client.Status().Patch(ctx, config, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if err == nil || !apierrors.IsConflict(err) {
			return err
		}
		if attempt == maxStatusAttempts-1 {
			return fmt.Errorf("still conflicting after %d attempts: %w", maxStatusAttempts, err)
		}
		latest = &bootstrapv1.KubeadmConfig{}
		if err := r.configReader().Get(ctx, client.ObjectKeyFromObject(config), latest); err != nil {
			return err
		}
	}
}

// mergeStatus carries this reconcile's status changes (before to config)
// over onto latest's status, into config. Everything but NodeBootstrapped
// is this reconciler's, so its fields and conditions are config's, except
// conditions it left alone that changed meanwhile. NodeBootstrapped is the
// nodes': a report written meanwhile wins over the Pending of data built
// before it. Ready summarises the result again.
func mergeStatus(before, config, latest *bootstrapv1.KubeadmConfig) {
	for _, c := range latest.Status.Conditions {
		if c.Type == bootstrapv1.KubeadmConfigReadyCondition {
			continue
		}
		if theirs, ours := changed(before, latest, c.Type), changed(before, config, c.Type); theirs && (!ours || c.Type == nodebootv1.NodeBootstrappedCondition) {
			conditions.Delete(config, c.Type)
			conditions.Set(config, c)
		}
	}
	// A condition latest no longer has was deleted by its other writer.
	for _, c := range before.Status.Conditions {
		if !conditions.Has(latest, c.Type) && !changed(before, config, c.Type) {
			conditions.Delete(config, c.Type)
		}
	}
	// The summary sees the same condition types it saw in patchConfig,
	// which reported its error, if any.
	_ = SetReady(config)
}

// changed tells whether condition typ differs between a and b.
func changed(a, b *bootstrapv1.KubeadmConfig, typ string) bool {
	x, y := conditions.Get(a, typ), conditions.Get(b, typ)
	if x == nil || y == nil {
		return x != y
	}
	return !conditions.HasSameState(x, y)
}

func markWaitingForInfrastructure(config *bootstrapv1.KubeadmConfig) {
	v1beta1conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableV1Beta1Condition, bootstrapv1.WaitingForClusterInfrastructureV1Beta1Reason, clusterv1.ConditionSeverityInfo, "")
	conditions.Set(config, metav1.Condition{
		Type:    bootstrapv1.KubeadmConfigDataSecretAvailableCondition,
		Status:  metav1.ConditionFalse,
		Reason:  bootstrapv1.KubeadmConfigDataSecretNotAvailableReason,
		Message: "Waiting for Cluster status.infrastructureReady to be true",
	})
}

// markWaitingForControlPlane is set once, so errors reported later keep
// their transition time.
func markWaitingForControlPlane(config *bootstrapv1.KubeadmConfig) {
	if conditions.Has(config, bootstrapv1.KubeadmConfigDataSecretAvailableCondition) {
		return
	}
	v1beta1conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableV1Beta1Condition, clusterv1.WaitingForControlPlaneAvailableV1Beta1Reason, clusterv1.ConditionSeverityInfo, "")
	conditions.Set(config, metav1.Condition{
		Type:    bootstrapv1.KubeadmConfigDataSecretAvailableCondition,
		Status:  metav1.ConditionFalse,
		Reason:  bootstrapv1.KubeadmConfigDataSecretNotAvailableReason,
		Message: "Waiting for Cluster control plane to be initialized",
	})
}

func markDataSecretAvailable(config *bootstrapv1.KubeadmConfig) {
	v1beta1conditions.MarkTrue(config, bootstrapv1.DataSecretAvailableV1Beta1Condition)
	conditions.Set(config, metav1.Condition{
		Type:   bootstrapv1.KubeadmConfigDataSecretAvailableCondition,
		Status: metav1.ConditionTrue,
		Reason: bootstrapv1.KubeadmConfigDataSecretAvailableReason,
	})
}

// markDataSecretFailed reports input that does not render; message names the
// field paths at fault.
func markDataSecretFailed(config *bootstrapv1.KubeadmConfig, message string) {
	markDataSecretNotAvailable(config, bootstrapv1.KubeadmConfigDataSecretNotAvailableReason, message)
}

// markDataSecretNotAvailable sets both condition generations: the v1beta1
// one with CABPK's generation-failed reason, the v1beta2 one with reason.
func markDataSecretNotAvailable(config *bootstrapv1.KubeadmConfig, reason, message string) {
	v1beta1conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableV1Beta1Condition, bootstrapv1.DataSecretGenerationFailedV1Beta1Reason, clusterv1.ConditionSeverityWarning, "%s", message)
	conditions.Set(config, metav1.Condition{
		Type:    bootstrapv1.KubeadmConfigDataSecretAvailableCondition,
		Status:  metav1.ConditionFalse,
		Reason:  reason,
		Message: message,
	})
}

// markDataSecretTooLarge reports data over its size budget. A config whose
// data carries a fresh random credential renders a few bytes longer or
// shorter each time, and every status change requeues the config: so once
// this generation is reported too large, the first message stays, or the
// config would re-render and rewrite its status once a second for ever.
func markDataSecretTooLarge(config *bootstrapv1.KubeadmConfig, message string) {
	if c := conditions.Get(config, bootstrapv1.KubeadmConfigDataSecretAvailableCondition); c != nil &&
		c.Reason == nodebootv1.BootstrapDataTooLargeReason && c.ObservedGeneration == config.Generation {
		return
	}
	markDataSecretNotAvailable(config, nodebootv1.BootstrapDataTooLargeReason, message)
}

func markCertificatesAvailable(config *bootstrapv1.KubeadmConfig) {
	v1beta1conditions.MarkTrue(config, bootstrapv1.CertificatesAvailableV1Beta1Condition)
	conditions.Set(config, metav1.Condition{
		Type:   bootstrapv1.KubeadmConfigCertificatesAvailableCondition,
		Status: metav1.ConditionTrue,
		Reason: bootstrapv1.KubeadmConfigCertificatesAvailableReason,
	})
}

// markCertificatesFailed reports certificates that could not be read or
// generated. As CABPK, the v1beta1 reason tells generation (init) from a
// missing or corrupted Secret (joins).
func markCertificatesFailed(config *bootstrapv1.KubeadmConfig, generating bool, message string) {
	reason, severity := bootstrapv1.CertificatesCorruptedV1Beta1Reason, clusterv1.ConditionSeverityError
	if generating {
		reason, severity = bootstrapv1.CertificatesGenerationFailedV1Beta1Reason, clusterv1.ConditionSeverityWarning
	}
	v1beta1conditions.MarkFalse(config, bootstrapv1.CertificatesAvailableV1Beta1Condition, reason, severity, "%s", message)
	conditions.Set(config, metav1.Condition{
		Type:    bootstrapv1.KubeadmConfigCertificatesAvailableCondition,
		Status:  metav1.ConditionUnknown,
		Reason:  bootstrapv1.KubeadmConfigCertificatesAvailableInternalErrorReason,
		Message: message,
	})
}
