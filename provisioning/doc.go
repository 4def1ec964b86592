// Package provisioning holds the neutral description of what a node must do at
// first boot — a Plan — and the Provisioner interface that turns a Plan into the
// bytes an operating system consumes (cloud-init, Ignition, ...).
//
// The package is deliberately ignorant of kubeadm, Cluster API and Kubernetes
// clients: a k3s, RKE2 or MicroK8s bootstrap provider can build a Plan and render
// it with any registered Provisioner without importing anything kubeadm-shaped.
// That split is the reason nodeboot exists, and a test enforces it.
//
// Errors are values to match, not text to read: every Render and Check error
// of every provisioner matches ErrInvalid (the input must change) or
// ErrUnsupported (this provisioner cannot express it) with errors.Is, and
// errors.As finds the Problems, each at a typed Path. Plan elements carry
// the Path of the input they came from (Origin, Plan.Origins), so problems
// name what the provider's user wrote without any translation table.
// docs/provisioning-api.md lists every option per provisioner.
//
// Each Plan element means one thing in every native provisioner (Plan's
// godoc says what); Capabilities tells which elements a format expresses,
// and package provisioning/conformance holds Plans with the node each must
// give, for nodeboot's provisioners and anyone else's.
//
// Fields that are pointers are tri-state on purpose: "unset", "false" and "true"
// render differently in the formats we must reproduce byte for byte.
package provisioning
