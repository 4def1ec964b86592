// Package v1alpha1 is the addons.nodeboot.dev/v1alpha1 API: FirstBootAddon, a
// set of Kubernetes manifests that nodeboot writes onto the first control-plane
// node of every selected Cluster and applies once, right after kubeadm init.
//
// The API package imports only the standard library and apimachinery (a test
// enforces it), so that any project can vendor these types without pulling in
// controller-runtime, Cluster API or nodeboot's own libraries. Validation lives
// twice on purpose: as CEL rules in the generated CRD schema, so the API server
// rejects most mistakes at admission, and in the reconciler with the same
// field paths, so objects that slipped past an older schema are still reported.
//
// +kubebuilder:object:generate=true
// +groupName=addons.nodeboot.dev
package v1alpha1
