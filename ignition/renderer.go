package ignition

import (
	"fmt"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Format is the name of this provisioner's output, as CABPK stores it.
const Format = "ignition"

// Versions lists the Options.Version values this provisioner renders:
// VersionCABPK is CABPK's Ignition 2.3, the others native Ignition v3 spec
// versions. "" (the zero Options) is DefaultVersion.
var Versions = []string{VersionCABPK, "3.3.0", "3.4.0", "3.5.0"}

// VersionCABPK selects CABPK's dialect, Ignition 2.3 through a Container
// Linux Config: provisioning.VersionCABPK.
const VersionCABPK = provisioning.VersionCABPK

// DefaultVersion is the Ignition v3 spec version the zero Options render:
// what Flatcar (since Ignition 2.15) and Fedora CoreOS both accept.
const DefaultVersion = "3.4.0"

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
	if opts.Version == VersionCABPK {
		return checkLegacy(p, opts).Strict(opts)
	}
	d, err := dialectFor(opts.Version)
	if err != nil {
		ps := p.Validate()
		ps.AddError(opts.VersionPath(), err)
		return ps
	}
	ps, _ := checkV3(p, opts, d)
	return ps.Strict(opts)
}

// Render implements provisioning.Provisioner.
func (*Renderer) Render(p *provisioning.Plan, opts provisioning.Options) (*provisioning.Output, error) {
	if p == nil {
		return nil, p.Validate().Err()
	}
	var out *provisioning.Output
	var err error
	if opts.Version == VersionCABPK {
		out, err = renderLegacy(p, opts)
	} else {
		d, derr := dialectFor(opts.Version)
		if derr != nil {
			var ps provisioning.Problems
			ps.AddError(opts.VersionPath(), derr)
			return nil, ps
		}
		out, err = renderV3(p, opts, d)
	}
	if err == nil && opts.Strict && len(out.Warnings) > 0 {
		// Both dialects find their warnings while rendering; under
		// Strict they are the errors.
		return nil, out.Warnings.Escalate()
	}
	return out, err
}

func dialectFor(version string) (*dialect, error) {
	if version == "" {
		version = DefaultVersion
	}
	for i := range dialects {
		if dialects[i].version == version {
			return &dialects[i], nil
		}
	}
	return nil, fmt.Errorf("%w %q: the %s provisioner renders %q (CABPK's Ignition 2.3), 3.3.0, 3.4.0 and 3.5.0 (%q is %s)", ErrUnknownVersion, version, Format, VersionCABPK, "", DefaultVersion)
}
