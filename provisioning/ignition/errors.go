package ignition

import "github.com/nodeboot/nodeboot/provisioning"

// Sentinels of this provisioner's problems and errors. Each matches
// provisioning.ErrInvalid or provisioning.ErrUnsupported too, so callers can
// test for the class or for the exact cause with errors.Is.
var (
	// ErrUnknownVersion: Options.Version names no dialect this package
	// renders. It matches provisioning.ErrUnsupported.
	ErrUnknownVersion = provisioning.NewError(provisioning.ErrUnsupported, "unknown Ignition version")
	// ErrAdditionalConfig: the user's additional config cannot be read,
	// translated or merged. It matches provisioning.ErrInvalid.
	ErrAdditionalConfig = provisioning.NewError(provisioning.ErrInvalid, "invalid additional config")
	// ErrButaneNotLinked: the additional config is Butane and the program
	// does not link Butane translation (package ignition/butane, see
	// RegisterButane). The input may be fine; this build cannot read it, so
	// it matches provisioning.ErrUnsupported.
	ErrButaneNotLinked = provisioning.NewError(provisioning.ErrUnsupported, "Butane translation is not linked into this program")
	// ErrInvalidOutput: the rendered config failed Ignition's own validation.
	// It means a bug in this package (or input that slipped past its
	// checks), not bad input as such; it matches provisioning.ErrInvalid,
	// because only other input renders.
	ErrInvalidOutput = provisioning.NewError(provisioning.ErrInvalid, "rendered Ignition config is invalid")
)
