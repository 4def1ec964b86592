package ignition

import (
	"fmt"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Format is the name of this provisioner's output, as CABPK stores it.
const Format = "ignition"

// Versions lists the Options.Version values this provisioner renders: ""
// is CABPK's Ignition 2.3, the others native Ignition v3 spec versions.
var Versions = []string{"", "3.3.0", "3.4.0", "3.5.0"}

// Renderer is the Ignition Provisioner.
type Renderer struct{}

var _ provisioning.Provisioner = (*Renderer)(nil)

func init() { provisioning.Register(&Renderer{}) }

// Format implements provisioning.Provisioner.
func (*Renderer) Format() string { return Format }

// Check implements provisioning.Provisioner.
func (*Renderer) Check(p *provisioning.Plan, opts provisioning.Options) provisioning.Problems {
	if p == nil {
		return p.Validate()
	}
	if opts.Version == "" {
		return checkLegacy(p, opts)
	}
	d, err := dialectFor(opts.Version)
	if err != nil {
		ps := p.Validate()
		ps.AddError(opts.VersionPath(), err)
		return ps
	}
	ps, _ := checkV3(p, opts, d)
	return ps
}

// Render implements provisioning.Provisioner.
func (*Renderer) Render(p *provisioning.Plan, opts provisioning.Options) (*provisioning.Output, error) {
	if p == nil {
		return nil, p.Validate().Err()
	}
	if opts.Version == "" {
		return renderLegacy(p, opts)
	}
	d, err := dialectFor(opts.Version)
	if err != nil {
		var ps provisioning.Problems
		ps.AddError(opts.VersionPath(), err)
		return nil, ps
	}
	return renderV3(p, opts, d)
}

func dialectFor(version string) (*dialect, error) {
	for i := range dialects {
		if dialects[i].version == version {
			return &dialects[i], nil
		}
	}
	return nil, fmt.Errorf("%w %q: the %s provisioner renders %q (CABPK's Ignition 2.3), 3.3.0, 3.4.0 and 3.5.0", ErrUnknownVersion, version, Format, "")
}
