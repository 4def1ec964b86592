package addons

import "errors"

var (
	// ErrInvalidAddon is wrapped by the error Contribute returns for add-ons
	// it cannot deliver; the wrapped provisioning.Problems name each field.
	ErrInvalidAddon = errors.New("invalid first-boot add-on")
)
