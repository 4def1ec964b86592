// Package controllers is nodeboot's KubeadmConfig reconciler: a drop-in
// replacement for the reconciler of Cluster API's kubeadm bootstrap provider
// (CABPK) v1.14.
//
// It keeps CABPK's observable contract — the init lock ConfigMap, the cluster
// certificate Secrets, bootstrap tokens in the workload cluster, the bootstrap
// data Secret, status fields and conditions — so a management cluster can swap
// providers in either direction mid-life. What differs is the inside: the
// reconciler only gathers objects and decides when to act; the node's data is
// assembled by package bootstrap into a provisioning.Plan and rendered by the
// registered provisioner, through package bootstrapdata's Builder, so the
// reconciler never builds bytes itself.
//
// Files are split by concern: reconcile.go holds the fixed reconciler shape
// and the phase switch, init.go and join.go the two roles, token.go the
// bootstrap token lifecycle, data.go the hand-off to the Builder (and what
// the build writes back to the spec), secret.go the output Secret, status.go
// the conditions, and errors.go the one place where a failure becomes a
// condition, a retry or a terminal error. The build itself, and the
// read-only rebuild `nodeboot verify` drives (Rebuilder, over a ListReader),
// live in package bootstrapdata, which this package imports and which never
// imports it. cache.go holds the manager's cache options
// (ManagerCacheOptions), which keep of each kind what the reconcilers read:
// cmd/manager builds its cache with them, and test/controllers'
// TestCachesHoldMetadataOnly holds them to that.
package controllers
