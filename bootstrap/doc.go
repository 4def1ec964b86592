// Package bootstrap turns Cluster API kubeadm intent — a KubeadmConfig, its
// Cluster, its owner Machine or MachinePool and the Secrets they reference —
// into a provisioning.Plan, the same way Cluster API's kubeadm bootstrap
// provider (CABPK) v1.14 decides it: init versus join, the kubeadm YAML for the
// Kubernetes version, certificate files, discovery defaults, templated files.
//
// It never produces bytes for a node: renderers do. It never talks to an API
// server either: Secrets come through the small SecretGetter interface, so a
// library user needs no Kubernetes client, and the controller passes one
// backed by its own client. Kubeadm configuration goes through Cluster API's
// own version conversion (bootstrap/kubeadm/pkg/types) so every supported
// Kubernetes minor gets exactly the YAML CABPK writes.
package bootstrap
