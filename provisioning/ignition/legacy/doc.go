// Package legacy is CABPK's Ignition dialect: the Ignition 2.3 JSON that
// Cluster API's kubeadm bootstrap provider (CABPK) v1.14 emits, byte for
// byte, for Options.Version ignition.VersionCABPK. It registers itself with
// package ignition from its init, so a program renders CABPK's dialect by
// importing it for its side effect:
//
//	import _ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
//
// It is a package of its own because it is CABPK's compatibility path, not
// nodeboot's direction, and because it is heavy: it links the Container
// Linux Config transpiler and Flatcar's Ignition 2.x, which a provider that
// renders only native Ignition (package ignition/v3) need not link. Package
// ignition's documentation describes how the bytes are kept identical to
// CABPK's; the reference vectors in test/vectors hold them.
package legacy
