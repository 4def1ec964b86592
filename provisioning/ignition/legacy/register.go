package legacy

import (
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// CABPK's dialect registers itself with the ignition Renderer.
func init() { ignition.RegisterDialect(ignition.VersionCABPK, dialect{}) }

// dialect is CABPK's Ignition 2.3.
type dialect struct{}

var _ ignition.Dialect = dialect{}

// Check implements ignition.Dialect.
func (dialect) Check(p *provisioning.Plan, opts provisioning.Options) provisioning.Problems {
	return checkLegacy(p, opts)
}

// Render implements ignition.Dialect.
func (dialect) Render(p *provisioning.Plan, opts provisioning.Options) (*provisioning.Output, error) {
	return renderLegacy(p, opts)
}
