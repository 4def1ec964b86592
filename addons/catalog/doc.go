// Package catalog holds nodeboot's built-in add-ons: upstream manifests kept as
// real YAML files (embedded with go:embed) whose few cluster-specific values are
// text/template placeholders, rendered from typed, validated Params.
//
// Placeholders sit only inside YAML scalars and receive only values this
// package validated (IP addresses, CIDRs, DNS names, integers), so a template
// cannot produce YAML of another shape; tests decode every rendered document
// into its typed Kubernetes object. Each built-in pins the upstream release it
// follows; the version is part of what the node records as applied.
//
// The package depends on the standard library only, so package addons and any
// other bootstrap provider can use it without pulling in Kubernetes clients.
package catalog
