package ignitionv3_test

import (
	"github.com/nodeboot/nodeboot/ignition/internal/testplan"
	"github.com/nodeboot/nodeboot/provisioning"
)

// basePlan is the smallest Plan both dialects render.
func basePlan() *provisioning.Plan { return testplan.Base() }
