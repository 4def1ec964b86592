package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/controllers/bootstrapdata"
)

// store saves what the data refers to (bootstrap.Result.Secrets, such as
// add-ons the node fetches), then the data Secret, then the conditions the
// build asked for. The referenced Secrets go first: data must never point
// at something that does not exist yet.
func (r *Reconciler) store(ctx context.Context, s *scope, data *bootstrapdata.Data) error {
	for _, sec := range data.Result.Secrets {
		sec = sec.DeepCopy()
		sec.OwnerReferences = []metav1.OwnerReference{controllerRef(s.config)}
		if err := r.Client.Create(ctx, sec); err != nil {
			if !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create Secret %s: %w", klog.KObj(sec), err)
			}
			// Only ever replace what this config may take (its own Secret, or
			// a leftover of its type): someone else's is not ours to overwrite.
			cur := &corev1.Secret{}
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(sec), cur); err != nil {
				return fmt.Errorf("read Secret %s: %w", klog.KObj(sec), err)
			}
			if !bootstrapdata.ConfigMayTake(s.config, cur, sec.Type) {
				conflict := &bootstrapdata.SecretConflictError{Namespace: sec.Namespace, Name: sec.Name}
				markDataSecretFailed(s.config, conflict.Error())
				return conflict
			}
			sec.ResourceVersion = cur.ResourceVersion
			if err := r.Client.Update(ctx, sec); err != nil {
				return fmt.Errorf("update Secret %s: %w", klog.KObj(sec), err)
			}
		}
	}
	if err := r.storeData(ctx, s, data.Output, data.Result.DataAnnotations); err != nil {
		return err
	}
	fetched := false
	for _, c := range data.Result.Conditions {
		conditions.Set(s.config, c)
		fetched = fetched || c.Type == nodebootv1.AddonsFetchedCondition
	}
	if !fetched {
		conditions.Delete(s.config, nodebootv1.AddonsFetchedCondition)
	}
	return nil
}
