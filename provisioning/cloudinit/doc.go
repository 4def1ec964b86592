// Package cloudinit renders a provisioning.Plan as #cloud-config user data.
//
// Two dialects. The zero provisioning.Options render the plain one
// (VersionPlain): a typed document where every value is data and every
// hazard an error. Options.Version VersionCABPK (which package bootstrap
// passes for KubeadmConfigs) renders CABPK's: its output is byte-for-byte
// what Cluster API's kubeadm bootstrap
// provider (CABPK) v1.14 writes for the same intent, so machines keep the same
// bootstrap data when an operator swaps providers. CABPK produces its bytes from
// text templates with a peculiar layout; this package reproduces that layout
// with one small emitter (emit.go) over the typed Plan, with every layout rule
// written down there once, instead of carrying copies of the templates.
//
// That layout inherits CABPK's hazards — content that cloud-init's jinja step
// rejects, numbers where the schema wants strings, booleans cloud-init ignores.
// Check reports each of them as a warning naming the field, and
// provisioning.Options.Corrections renders output that avoids them (hazards.go).
package cloudinit
