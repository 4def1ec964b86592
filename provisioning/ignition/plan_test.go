package ignition_test

import (
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition/internal/testplan"

	// The tests here render both dialects through the front.
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
)

// basePlan is the smallest Plan both dialects render.
func basePlan() *provisioning.Plan { return testplan.Base() }

func ptr[T any](v T) *T { return &v }
