// Package ignitionv3 is nodeboot's native Ignition dialect: the Plan built
// as coreos/ignition v3 typed structs, for Options.Version "3.3.0", "3.4.0",
// "3.5.0" and "" (ignition.DefaultVersion). It registers each spec version
// with package ignition from its init, so a program renders native Ignition
// by importing it for its side effect:
//
//	import _ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
//
// The package is named ignitionv3, not v3, so that its name says what it
// is wherever it is imported. It is a package of its own so that a provider
// that renders only native Ignition links nothing of CABPK's Ignition 2.3
// (package ignition/legacy): neither the Container Linux Config transpiler
// nor Flatcar's Ignition 2.x. Butane additional config is read when the
// program imports package ignition/butane (ignition.RegisterButane).
package ignitionv3
