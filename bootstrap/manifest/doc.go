// Package manifest reads the objects a KubeadmConfig is built from — the
// Cluster, its Machine or MachinePool, the KubeadmConfig, Secrets, an optional
// KubeadmControlPlane or KubeadmConfigTemplate — from multi-document YAML, as
// `kubectl get -o yaml` would print them, and assembles a bootstrap.Input.
// The CLI and the tests share it, so both read the reference vectors the same way.
package manifest
