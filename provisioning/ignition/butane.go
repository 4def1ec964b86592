package ignition

import (
	"sync"

	"github.com/coreos/vcontext/report"
)

// ButaneTranslator translates a Butane config into the Ignition JSON of the
// spec version its Butane version names, with Butane's report, as Butane's
// config.TranslateBytes does. The native dialect (package ignition/v3)
// calls it, through RegisteredButane, for additional
// config that is Butane (YAML with variant and version keys), after refusing
// variants and versions nodeboot does not accept, and parse what it returns
// as Ignition JSON.
type ButaneTranslator func(input []byte) ([]byte, report.Report, error)

var (
	butaneMu        sync.RWMutex
	butaneTranslate ButaneTranslator
)

// RegisterButane makes Butane additional config translatable. Package
// github.com/nodeboot/nodeboot/provisioning/ignition/butane calls it from its init, so a
// program opts into Butane input by importing that package, usually for its
// side effect alone:
//
//	import _ "github.com/nodeboot/nodeboot/provisioning/ignition/butane"
//
// Butane is a package of its own because it is heavy: its translators, and
// through Butane's base/util package the standard library's testing package
// and testify, are linked into every program that imports them. A program
// without it renders Ignition JSON additional config as before, and refuses
// Butane with ErrButaneNotLinked at the additional config's field path.
// Registering twice, or a nil translator, panics: it is a programming error
// caught at init time.
func RegisterButane(t ButaneTranslator) {
	butaneMu.Lock()
	defer butaneMu.Unlock()
	if t == nil {
		panic("ignition: RegisterButane with a nil translator")
	}
	if butaneTranslate != nil {
		panic("ignition: Butane translator registered twice")
	}
	butaneTranslate = t
}

// RegisteredButane returns the registered translator, or nil. The native
// dialect (package ignition/v3) calls it for Butane additional config.
func RegisteredButane() ButaneTranslator {
	butaneMu.RLock()
	defer butaneMu.RUnlock()
	return butaneTranslate
}
