package ignition

import "errors"

var (
	// ErrUnknownVersion: Options.Version names no dialect this package renders.
	ErrUnknownVersion = errors.New("unknown Ignition version")
	// ErrAdditionalConfig: the user's additional config cannot be read,
	// translated or merged.
	ErrAdditionalConfig = errors.New("invalid additional config")
	// ErrInvalidOutput: the rendered config failed Ignition's own validation.
	// It means a bug in this package, not bad input.
	ErrInvalidOutput = errors.New("rendered Ignition config is invalid")
)
