package cloudinit

import (
	"bytes"
	"compress/gzip"
	"fmt"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Format is the name of this provisioner's output, as CABPK stores it.
const Format = "cloud-config"

// Renderer is the cloud-init Provisioner.
type Renderer struct{}

var _ provisioning.Provisioner = (*Renderer)(nil)

func init() { provisioning.Register(&Renderer{}) }

// Format implements provisioning.Provisioner.
func (*Renderer) Format() string { return Format }

// Check implements provisioning.Provisioner. cloud-init can express every Plan
// feature, so it reports validation errors and the CABPK-layout hazards only.
func (*Renderer) Check(p *provisioning.Plan, opts provisioning.Options) provisioning.Problems {
	ps, _ := check(p, opts)
	return ps
}

// check is what Check and Render share. This is CABPK's dialect: what
// Validate calls a hazard is what CABPK renders, so it is a warning here.
func check(p *provisioning.Plan, opts provisioning.Options) (provisioning.Problems, *hazards) {
	ps := p.Validate().Tolerate()
	if opts.Version != "" {
		ps.Errorf("options.version", "the %s provisioner has one dialect; version %q is not supported", Format, opts.Version)
	}
	hz := findHazards(p, &ps, opts.Corrections)
	return ps, hz
}

// Render implements provisioning.Provisioner.
func (r *Renderer) Render(p *provisioning.Plan, opts provisioning.Options) (*provisioning.Output, error) {
	ps, hz := check(p, opts)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	e := &emitter{corrections: opts.Corrections, hz: hz}
	e.buf.Grow(estimate(p))
	e.plan(p)
	out := &provisioning.Output{
		Data:   e.buf.Bytes(),
		Format: Format,
		Sizes:  map[string]int{"write_files": e.filesBytes, "commands": e.commandsBytes, "total": e.buf.Len()},
	}
	if len(ps) > 0 {
		out.Warnings = ps.Warnings()
	}
	if opts.Compress {
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		_, _ = w.Write(out.Data)
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("gzip cloud-config: %w", err)
		}
		out.Sizes["uncompressed"] = len(out.Data)
		out.Data = z.Bytes()
		out.Sizes["total"] = len(out.Data)
	}
	if opts.MaxBytes > 0 && len(out.Data) > opts.MaxBytes {
		return nil, fmt.Errorf("%w: %s output is %d bytes, budget %d", provisioning.ErrTooLarge, Format, len(out.Data), opts.MaxBytes)
	}
	return out, nil
}

// estimate sizes the output buffer so rendering grows it at most once.
func estimate(p *provisioning.Plan) int {
	n := 1024
	for i := range p.Files {
		n += 128 + len(p.Files[i].Content)*5/4
	}
	for i := range p.Commands {
		n += 16 + len(p.Commands[i].Script)*5/4
	}
	return n + 256*len(p.Users) + 64*len(p.Mounts) + 32*len(p.BootCommands)
}
