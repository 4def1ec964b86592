package cloudinit

import "github.com/nodeboot/nodeboot/provisioning"

// Sentinels of this provisioner's problems. Each also matches
// provisioning.ErrUnsupported or provisioning.ErrInvalid with errors.Is.
var (
	// ErrUnknownVersion: Options.Version names no dialect this package
	// renders. It matches provisioning.ErrUnsupported.
	ErrUnknownVersion = provisioning.NewError(provisioning.ErrUnsupported, "unknown cloud-config version")
)
