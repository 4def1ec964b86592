// Package addons connects FirstBootAddon objects to nodeboot's KubeadmConfig
// reconciler and reports what the nodes did.
//
// Extension plugs into the KubeadmConfig reconciler through its two hooks:
// MutateConfig gives every node of a Cluster the kubelet settings its add-ons
// need (NodeLocal DNSCache in IPVS mode needs clusterDNS on the link-local
// address), and MutatePlan adds the selected add-ons to the init control-plane
// node's Plan through package addons. A Cluster no add-on selects passes both
// hooks untouched, so its bootstrap data stays byte-identical to CABPK's.
//
// FirstBootAddonReconciler validates each FirstBootAddon (field paths on the
// SourceValid condition), computes the digest of what will be delivered and,
// once a workload cluster is reachable, reads the record the node wrote
// (ConfigMap kube-system/nodeboot-addons) and reports Applied or Failed per
// Cluster. It never builds bootstrap data itself.
//
// Resolution (which add-ons a Cluster gets, and what they contain) is shared by
// both through Resolver, so the digest in status is the digest the node checks.
// Delivery (which add-ons reached a Cluster) is shared too (carried.go): the
// init node's data Secret names the add-ons it carries (AnnotationCarried), so
// a joining node's kubelet settings and the status give one answer, tied to
// the data rather than to when the control plane was initialized.
//
// Over the size budget, the fetch fallback (fetch.go) moves an init node's
// manifests out of its data, and the fetch endpoint (fetchendpoint.go:
// FetchHandler, FetchServer) serves them to the node's fetch step, the
// other half of the pair, in package addons (addons/fetchstep.go and
// apply.sh's fetch).
package addons
