package main

import "github.com/nodeboot/nodeboot/provisioning"

// registeredFormats lists the provisioners linked into this binary, logged
// at start so an operator sees whether format: ignition can be served.
func registeredFormats() []string { return provisioning.Formats() }
