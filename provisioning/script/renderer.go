package script

import (
	"github.com/nodeboot/nodeboot/provisioning"
)

// Format is the name of this provisioner's output.
const Format = "script"

// Renderer is the shell script Provisioner. Its zero value is ready to use.
type Renderer struct{}

var _ provisioning.Provisioner = (*Renderer)(nil)

func init() { provisioning.Register(&Renderer{}) }

// Format implements provisioning.Provisioner.
func (*Renderer) Format() string { return Format }

// Check implements provisioning.Provisioner. The script has no compatibility
// dialect to reproduce, so every hazard Validate finds is an error here.
func (*Renderer) Check(p *provisioning.Plan, opts provisioning.Options) provisioning.Problems {
	return check(p, opts)
}

// SizeUsers is the Output.Sizes key of what creating the Plan's users
// (sudo rules and SSH keys included) takes in a script.
const SizeUsers = "users"

// Render implements provisioning.Provisioner. Output.Sizes has
// provisioning.SizeTotal and, for each part the Plan has, the bytes spent on
// it: provisioning.SizeFiles (owners included), SizeUsers,
// provisioning.SizeUnits, provisioning.SizeCommands (boot commands and the
// sentinel included) and provisioning.SizeUserData; the rest is the header and the helper functions. The
// output is never compressed.
func (*Renderer) Render(p *provisioning.Plan, opts provisioning.Options) (*provisioning.Output, error) {
	ps := check(p, opts)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	e := newEmitter(p)
	e.plan(p)
	data := e.bytes()
	if opts.MaxBytes > 0 && len(data) > opts.MaxBytes {
		return nil, provisioning.TooLarge("%s output is %d bytes, budget %d", Format, len(data), opts.MaxBytes)
	}
	out := &provisioning.Output{Data: data, Format: Format, Sizes: e.sizes}
	out.Sizes[provisioning.SizeTotal] = len(data)
	if len(ps) > 0 {
		// Without errors every problem left is a warning.
		out.Warnings = ps
	}
	return out, nil
}
