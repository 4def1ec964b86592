package ignitionv3

import (
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// Each spec version registers itself with the ignition Renderer.
func init() {
	for i := range dialects {
		ignition.RegisterDialect(dialects[i].version, &dialects[i])
	}
}

var _ ignition.Dialect = (*dialect)(nil)

// Check implements ignition.Dialect.
func (d *dialect) Check(p *provisioning.Plan, opts provisioning.Options) provisioning.Problems {
	ps, _ := checkV3(p, opts, d)
	return ps
}

// Render implements ignition.Dialect.
func (d *dialect) Render(p *provisioning.Plan, opts provisioning.Options) (*provisioning.Output, error) {
	return renderV3(p, opts, d)
}
