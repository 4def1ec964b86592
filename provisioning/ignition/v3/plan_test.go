package ignitionv3_test

import (
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition/internal/testplan"
)

// basePlan is the smallest Plan both dialects render.
func basePlan() *provisioning.Plan { return testplan.Base() }
