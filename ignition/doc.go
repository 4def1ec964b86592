// Package ignition renders a provisioning.Plan as Ignition configuration, in
// two dialects chosen by provisioning.Options.Version.
//
// The default ("") dialect is the Ignition 2.3 JSON that Cluster API's kubeadm
// bootstrap provider (CABPK) v1.14 emits, byte for byte, so Flatcar machines
// keep their bootstrap data when an operator swaps providers. CABPK gets those
// bytes by filling a Container Linux Config (CLC) text template, parsing it as
// YAML and transpiling it. We build the same CLC as typed values
// (container-linux-config-transpiler's config/types) instead, and transpile and
// serialise once. Parsing the template as YAML changes some values on the way
// (a literal block clips trailing newlines, a plain scalar loses a " #comment",
// "644" is a decimal mode); legacy_yaml.go writes each of those readings down
// once, so the typed build reproduces them without a template. Features CABPK
// silently drops are errors here, except the ones existing objects already rely
// on (append), which are warnings so a provider swap changes no byte.
//
// The native dialects ("3.3.0", "3.4.0", "3.5.0") are the working group's
// direction: the Plan is built as coreos/ignition v3 typed structs, the user's
// additional config (Butane or Ignition JSON) is merged with Ignition's own
// merge rules, and the result passes Ignition's own validation before it is
// returned. Every Plan feature is expressed; what Ignition cannot say is an
// error naming the field, never a silent drop.
package ignition
