package ignition

import (
	"fmt"
	"slices"
	"sync"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Format is the name of this provisioner's output, as CABPK stores it.
const Format = "ignition"

// Versions lists the Options.Version values this provisioner renders when
// both dialect packages are linked: VersionCABPK is CABPK's Ignition 2.3
// (package ignition/legacy), the others native Ignition v3 spec versions
// (package ignition/v3). "" (the zero Options) is DefaultVersion.
var Versions = []string{VersionCABPK, "3.3.0", "3.4.0", "3.5.0"}

// VersionCABPK selects CABPK's dialect, Ignition 2.3 through a Container
// Linux Config: provisioning.VersionCABPK.
const VersionCABPK = provisioning.VersionCABPK

// DefaultVersion is the Ignition v3 spec version the zero Options render:
// what Flatcar (since Ignition 2.15) and Fedora CoreOS both accept.
const DefaultVersion = "3.4.0"

// Dialect renders a Plan in one Options.Version. The Renderer handles a nil
// Plan, resolves "" to DefaultVersion and applies Options.Strict to what a
// Dialect returns, so a Dialect does neither.
type Dialect interface {
	// Check returns the Plan's problems in this dialect without rendering.
	Check(p *provisioning.Plan, opts provisioning.Options) provisioning.Problems
	// Render renders the Plan, with its warnings in the Output.
	Render(p *provisioning.Plan, opts provisioning.Options) (*provisioning.Output, error)
}

var (
	dialectsMu sync.RWMutex
	dialects   = map[string]Dialect{}
)

// RegisterDialect makes the Renderer render version with d. The dialect
// packages call it from their init, so a program renders a dialect by
// importing its package, usually for its side effect alone:
//
//	import (
//		_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy" // "cabpk"
//		_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"     // "3.3.0" to "3.5.0"
//	)
//
// A version nobody registered is refused with ErrUnknownVersion at
// Options.VersionPath(). Registering a version twice, an empty version or a
// nil Dialect panics, as provisioning.Register does: it is a programming
// error caught at init time.
func RegisterDialect(version string, d Dialect) {
	dialectsMu.Lock()
	defer dialectsMu.Unlock()
	if version == "" || d == nil {
		panic(fmt.Sprintf("ignition: RegisterDialect(%q) with an empty version or a nil Dialect", version))
	}
	if _, dup := dialects[version]; dup {
		panic(fmt.Sprintf("ignition: dialect %q registered twice", version))
	}
	dialects[version] = d
}

// Renderer is the Ignition Provisioner. It dispatches on Options.Version to
// the registered dialects.
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
	d, err := dialectFor(opts.Version)
	if err != nil {
		ps := p.Validate()
		ps.AddError(opts.VersionPath(), err)
		return ps
	}
	return d.Check(p, opts).Strict(opts)
}

// Render implements provisioning.Provisioner.
func (*Renderer) Render(p *provisioning.Plan, opts provisioning.Options) (*provisioning.Output, error) {
	if p == nil {
		return nil, p.Validate().Err()
	}
	d, err := dialectFor(opts.Version)
	if err != nil {
		var ps provisioning.Problems
		ps.AddError(opts.VersionPath(), err)
		return nil, ps
	}
	out, err := d.Render(p, opts)
	if err == nil && opts.Strict && len(out.Warnings) > 0 {
		// Both dialects find their warnings while rendering; under
		// Strict they are the errors.
		return nil, out.Warnings.Escalate()
	}
	return out, err
}

func dialectFor(version string) (Dialect, error) {
	if version == "" {
		version = DefaultVersion
	}
	dialectsMu.RLock()
	d, ok := dialects[version]
	dialectsMu.RUnlock()
	if ok {
		return d, nil
	}
	err := fmt.Errorf("%w %q: the %s provisioner renders %q (CABPK's Ignition 2.3), 3.3.0, 3.4.0 and 3.5.0 (%q is %s)", ErrUnknownVersion, version, Format, VersionCABPK, "", DefaultVersion)
	if slices.Contains(Versions, version) {
		pkg := "ignition/v3"
		if version == VersionCABPK {
			pkg = "ignition/legacy"
		}
		err = fmt.Errorf("%w; this program does not link that dialect (import package github.com/nodeboot/nodeboot/provisioning/%s)", err, pkg)
	}
	return nil, err
}
