package bootstrapdata

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
)

// ConfigControls reports whether config is obj's controller: Kind, name and
// UID of the controller reference all match. A Secret left by an earlier
// KubeadmConfig of the same name carries that config's UID, so it is not
// the current config's, and neither is a same-named Secret someone else
// controls.
func ConfigControls(config *bootstrapv1.KubeadmConfig, obj metav1.Object) bool {
	c := metav1.GetControllerOf(obj)
	return c != nil && c.Kind == "KubeadmConfig" && c.Name == config.Name && c.UID == config.UID && config.UID != ""
}

// ConfigMayTake reports whether config may write its Secret of type typ over
// cur, the Secret already under that name: cur is config's own, or nothing
// controls it and it is of that type (what a KubeadmConfig of the same name
// deleted with --cascade=orphan leaves; CABPK overwrites its data Secret the
// same way). Anything else is a SecretConflictError.
func ConfigMayTake(config *bootstrapv1.KubeadmConfig, cur *corev1.Secret, typ corev1.SecretType) bool {
	return cur.Type == typ && (ConfigControls(config, cur) || metav1.GetControllerOf(cur) == nil)
}
