package bootstrapdata

import (
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
