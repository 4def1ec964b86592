// Package ignition renders a provisioning.Plan as Ignition configuration, in
// two dialects chosen by provisioning.Options.Version. It is the front: the
// Renderer registered with provisioning under Format, the versions, the
// errors and the Butane hook. Each dialect is a package of its own that
// registers itself from its init (RegisterDialect), as coreos/ignition gives
// each config spec version its own package: ignition/legacy renders
// VersionCABPK, ignition/v3 the native versions. A program renders a dialect
// by importing its package, usually for its side effect alone, and links
// only the dialects it imports; a version whose dialect is not linked is
// refused with ErrUnknownVersion. What the dialects share of systemd unit
// handling lives in ignition/internal/units.
//
// The zero Options render the native dialect at DefaultVersion (nodeboot's
// own mode, for providers that are not CABPK). CABPK's dialect is chosen
// with Version VersionCABPK ("cabpk"; package bootstrap does so): it is the
// Ignition 2.3 JSON that Cluster API's kubeadm
// bootstrap provider (CABPK) v1.14 emits, byte for byte, so Flatcar machines
// keep their bootstrap data when an operator swaps providers. CABPK gets those
// bytes by filling a Container Linux Config (CLC) text template, parsing it as
// YAML and transpiling it. We build the same CLC as typed values
// (container-linux-config-transpiler's config/types) instead, convert them to
// Ignition 2.3 types as the transpiler does and run the checks it runs on
// them (ignition/legacy/convert.go; the transpiler stays the oracle in the tests), and
// serialise once; only the user's additional CLC goes through the
// transpiler itself. Parsing the template as YAML changes some values on the way
// (a literal block clips trailing newlines, a plain scalar loses a " #comment",
// "644" is a decimal mode); ignition/legacy/yaml.go writes each of those readings down
// once, so the typed build reproduces them without a template. Features CABPK
// silently drops are errors here, except the ones existing objects already rely
// on (append), which are warnings so a provider swap changes no byte.
//
// The native dialects ("3.3.0", "3.4.0", "3.5.0", and "" for DefaultVersion) are the working group's
// direction: the Plan is built as coreos/ignition v3 typed structs, the user's
// additional config (Ignition JSON, or Butane when the program imports
// package ignition/butane, which registers its translator with
// RegisterButane) is merged with Ignition's own merge rules. This package
// links no Butane, so a consumer that takes no Butane links neither Butane
// nor, through Butane's helpers, package testing. What the builder generates is valid by construction: each node
// it fills gets Ignition's own Validate call and duplicate check, without
// the JSON round trip and reflective walk of Ignition's parser
// (ignition/v3/validate.go); Ignition's parser reads the user's config, and the
// merged result when there is one. The user's config may not replace, remove
// or disable what nodeboot generates for the bootstrap (protectGenerated).
// Every Plan feature is expressed; what Ignition cannot say is an error
// naming the field, never a silent drop.
package ignition
