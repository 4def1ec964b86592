package provisioning

import "errors"

var (
	// ErrUnknownFormat is returned by Get for a format nobody registered.
	ErrUnknownFormat = errors.New("no provisioner registered for format")
	// ErrTooLarge is returned when an output exceeds Options.MaxBytes.
	ErrTooLarge = errors.New("rendered output exceeds the size budget")
)
