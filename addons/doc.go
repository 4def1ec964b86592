// Package addons turns first-boot add-ons into contributions to a
// provisioning.Plan: manifest files under /etc/kubernetes/addons/ and one
// post-bootstrap step that applies them, on the init control-plane node only.
//
// The node does the work so that no controller needs to reach the workload
// cluster at creation time: the step (apply.sh, embedded) fetches URL sources
// (its fetch step, fetchstep.go; for manifests the manager moved out of the
// data, from the fetch endpoint of controllers/addons, fetchendpoint.go),
// verifies every file's sha256 before applying any, waits a bounded time for
// the API server, applies with server-side apply under the field manager
// "nodeboot" and records what it did in ConfigMap kube-system/nodeboot-addons.
// Server-side apply with a fixed field manager makes a second run a no-op and
// lets a GitOps engine or ClusterResourceSet adopt the objects later.
//
// The package knows only provisioning and its embedded catalog of built-ins
// (package catalog): resolving which add-ons a Cluster gets, and reading
// ConfigMaps, is the controller's job (controllers/addons). Any bootstrap
// provider that builds a Plan can use Contribute.
//
// Ignition gap: a URL add-on is fetched by apply.sh on the node, for cloud-init
// and Ignition alike. Ignition v3 could fetch it natively (a remote file with
// verification.hash "sha256-<hex>"), but provisioning.File has no notion of a
// remote source today, and adding one that existing renderers ignore would drop
// content silently. The data an Ignition renderer would need is Addon.URL and
// Addon.SHA256 (also the url and sha256 columns of addons.list in the Plan).
package addons
