// Package bootstrapdata builds the bootstrap data of one KubeadmConfig
// from the objects of the management cluster, reading only. It is shared by
// the two programs that need those bytes: the reconciler (package
// controllers), which builds data for configs that have none and writes
// it, and `nodeboot verify`, which rebuilds the data of configs that have
// it and compares it with the stored Secret. Both run the one Builder, so
// what verify proves is what the reconciler writes.
//
// The package sits below the reconciler and never imports it: everything
// that writes (the data Secret, generated certificates, bootstrap tokens,
// status and conditions) stays in package controllers, which hands its
// clients to a Builder as client.Readers. A Rebuilder has nothing but a
// client.Reader, so a rebuild cannot change the cluster by construction.
//
// Files: build.go is the Builder (the hand-off to bootstrap.Build and the
// render), extension.go the Extension point add-ons and the bootstrap
// reporter plug into, owner.go the Machine or MachinePool a config belongs
// to, secrets.go the Secret look-ups of one build, controls.go the one
// check that a Secret is a config's own, rebuild.go the Rebuilder verify
// drives, and listreader.go the ListReader that serves its reads from a few
// paged list calls.
package bootstrapdata
