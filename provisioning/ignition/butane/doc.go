// Package butane lets nodeboot's native Ignition dialects read Butane
// additional config (variant flatcar or fcos). Importing it registers its
// translator with package ignition (ignition.RegisterButane), so a program
// opts in with a blank import:
//
//	import (
//		_ "github.com/nodeboot/nodeboot/provisioning/ignition/butane"
//		_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3" // the native dialect
//	)
//
// It is a package of its own because Butane is heavy for a consumer that
// never takes Butane input: besides its translators, Butane's base/util
// package ships its test helpers in a non-test file, so every program that
// links a Butane variant links the standard library's testing package and
// testify too. Package ignition alone links neither; without this package
// Butane input is refused with ignition.ErrButaneNotLinked, and Ignition
// JSON additional config works the same either way.
//
// Only the variants ignition accepts are linked, not Butane's all-variant
// registry (github.com/coreos/butane/config), which would bring OpenShift,
// r4e, fiot and every experimental version along.
package butane
