// Package provisioning holds the neutral description of what a node must do at
// first boot — a Plan — and the Provisioner interface that turns a Plan into the
// bytes an operating system consumes (cloud-init, Ignition, ...).
//
// The package is deliberately ignorant of kubeadm, Cluster API and Kubernetes
// clients: a k3s, RKE2 or MicroK8s bootstrap provider can build a Plan and render
// it with any registered Provisioner without importing anything kubeadm-shaped.
// That split is the reason nodeboot exists, and a test enforces it.
//
// Fields that are pointers are tri-state on purpose: "unset", "false" and "true"
// render differently in the formats we must reproduce byte for byte.
package provisioning
