// Package crdvalidate validates KubeadmConfigs and KubeadmConfigTemplates as
// the API server does before any webhook sees them: against the OpenAPI
// schema and CEL rules of Cluster API v1.14.2's own CRDs, with the
// apiextensions-apiserver code the API server runs. The CLI uses it so that
// offline rendering refuses what `kubectl apply` would refuse, and the
// differential tests use it so their generators keep only what a real
// cluster accepts.
//
// Only each CRD's v1beta2 schema is embedded, as gzipped JSON (crds/,
// regenerated from the module cache by `make crdvalidate-crds`; a test checks
// it equals the pinned module's CRD), and it is compiled on first use only,
// so commands that never validate pay nothing.
package crdvalidate
