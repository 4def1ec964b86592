package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Keys of the bootstrap data Secret, as the Cluster API contract names them.
const (
	dataSecretValueKey  = "value"
	dataSecretFormatKey = "format"
)

func controllerRef(config *bootstrapv1.KubeadmConfig) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: bootstrapv1.GroupVersion.String(),
		Kind:       "KubeadmConfig",
		Name:       config.Name,
		UID:        config.UID,
		Controller: ptr.To(true),
	}
}

// storeData writes the bootstrap data Secret exactly as CABPK does — named
// like the config, type cluster.x-k8s.io/secret, the cluster-name label, the
// config as controller — and records it in the status. Writing the Secret
// and patching the status are not atomic: a Secret left by an interrupted
// reconciliation already exists and is overwritten. annotations
// (bootstrap.Result.DataAnnotations, nil for CABPK's data) go in the same
// write.
func (r *Reconciler) storeData(ctx context.Context, s *scope, out *provisioning.Output, annotations map[string]string) error {
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:            s.config.Name,
			Namespace:       s.config.Namespace,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: s.cluster.Name},
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{controllerRef(s.config)},
		},
		Data: map[string][]byte{
			dataSecretValueKey:  out.Data,
			dataSecretFormatKey: []byte(out.Format),
		},
		Type: clusterv1.ClusterSecretType,
	}
	if err := r.Client.Create(ctx, sec); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create bootstrap data Secret %s: %w", klog.KObj(sec), err)
		}
		ctrl.LoggerFrom(ctx).Info("Bootstrap data secret for KubeadmConfig already exists, updating", "Secret", klog.KObj(sec))
		if err := r.Client.Update(ctx, sec); err != nil {
			return fmt.Errorf("update bootstrap data Secret %s: %w", klog.KObj(sec), err)
		}
	}
	s.config.Status.DataSecretName = sec.Name
	s.config.Status.Initialization.DataSecretCreated = ptr.To(true)
	markDataSecretAvailable(s.config)
	return nil
}

// ensureSecretOwnerRef makes the config the controller of an existing
// bootstrap data Secret (it may have lost its owner in a move or restore).
func (r *Reconciler) ensureSecretOwnerRef(ctx context.Context, config *bootstrapv1.KubeadmConfig) error {
	sec := &corev1.Secret{}
	if err := r.SecretCachingClient.Get(ctx, client.ObjectKey{Namespace: config.Namespace, Name: config.Name}, sec); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get bootstrap data Secret %s: %w", klog.KObj(config), err)
	}
	ref := controllerRef(config)
	if util.HasExactOwnerRef(sec.OwnerReferences, ref) {
		return nil
	}
	if c := metav1.GetControllerOf(sec); c != nil && c.Kind != ref.Kind {
		return fmt.Errorf("bootstrap data Secret %s is already controlled by %s %s", klog.KObj(sec), c.Kind, c.Name)
	}
	original := sec.DeepCopy()
	sec.SetOwnerReferences(util.EnsureOwnerRef(sec.GetOwnerReferences(), ref))
	if err := r.Client.Patch(ctx, sec, client.MergeFrom(original)); err != nil {
		return fmt.Errorf("set KubeadmConfig %s as owner of bootstrap data Secret: %w", klog.KObj(config), err)
	}
	return nil
}
