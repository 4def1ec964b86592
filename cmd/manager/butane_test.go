package main

import (
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
)

// TestButaneLinked: the manager takes Butane additional config in the native
// Ignition dialects, because main.go imports ignition/butane; without that
// import the same input is ignition.ErrButaneNotLinked.
func TestButaneLinked(t *testing.T) {
	r, err := provisioning.Get("ignition")
	if err != nil {
		t.Fatal(err)
	}
	plan := &provisioning.Plan{Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}}}
	butane := []byte("variant: flatcar\nversion: 1.1.0\nstorage:\n  files:\n  - path: /etc/butane\n    contents:\n      inline: x\n")
	if _, err := r.Render(plan, provisioning.Options{Version: "3.4.0", AdditionalConfig: butane}); err != nil {
		t.Fatalf("Butane additional config: %v", err)
	}
}
