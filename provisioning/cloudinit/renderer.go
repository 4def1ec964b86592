package cloudinit

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"

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
	if p == nil {
		return p.Validate()
	}
	if plainVersion(opts.Version) {
		ps, _ := checkPlain(p, opts)
		return ps
	}
	ps, _ := check(withUnits(p), opts)
	return ps
}

// VersionCABPK selects CABPK's dialect: provisioning.VersionCABPK.
const VersionCABPK = provisioning.VersionCABPK

// plainVersion reports whether version selects the plain dialect: the
// zero Options do, so a provider that is not CABPK gets nodeboot's own
// mode without asking.
func plainVersion(version string) bool { return version == "" || version == VersionPlain }

// check is what Check and Render share. This is CABPK's dialect: what
// Validate calls a hazard is what CABPK renders, so it is a warning here,
// and an error only under Options.Strict.
func check(p *provisioning.Plan, opts provisioning.Options) (provisioning.Problems, *hazards) {
	ps := p.Validate().Tolerate()
	if opts.Version != VersionCABPK {
		ps.Reportf(opts.VersionPath(), ErrUnknownVersion, "the %s provisioner renders version %q or %q (its plain dialect) and %q (CABPK's dialect); version %q is not supported", Format, "", VersionPlain, VersionCABPK, opts.Version)
	}
	if len(opts.AdditionalConfig) > 0 {
		// cloud-init merges user data parts itself; a second document is
		// not something this dialect can carry, and dropping it silently
		// would ship a node without it.
		provisioning.Unsupported(&ps, Format, opts.AdditionalConfigPath(), "additional config")
	}
	// CABPK's bytes have no user data parts and write "{{ }}" as the
	// user's jinja: neither can be carried without changing them.
	provisioning.RefuseNodeValues(&ps, p, Format+" (CABPK)")
	provisioning.RefuseUserData(&ps, p, Format+" (CABPK)")
	hz := findHazards(p, &ps, opts.Corrections)
	provisioning.WarnSharedShell(&ps, p, Format+" (CABPK)")
	return ps.Strict(opts), hz
}

// Render implements provisioning.Provisioner.
func (r *Renderer) Render(p *provisioning.Plan, opts provisioning.Options) (*provisioning.Output, error) {
	if p == nil {
		return nil, p.Validate().Err()
	}
	if plainVersion(opts.Version) {
		return renderPlain(p, opts)
	}
	p = withUnits(p)
	ps, hz := check(p, opts)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	e := &emitter{corrections: opts.Corrections, hz: hz}
	e.buf = make(doc, 0, estimate(p))
	e.plan(p)
	out := &provisioning.Output{
		Data:   []byte(e.buf),
		Format: Format,
		Sizes: map[string]int{
			provisioning.SizeWriteFiles: e.filesBytes, provisioning.SizeCommands: e.commandsBytes, provisioning.SizeTotal: len(e.buf),
		},
	}
	if len(ps) > 0 {
		// Without errors every problem left is a warning.
		out.Warnings = ps
	}
	if opts.Compress {
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		_, _ = w.Write(out.Data)
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("%w: gzip cloud-config: %w", provisioning.ErrInvalid, err)
		}
		out.Sizes[provisioning.SizeUncompressed] = len(out.Data)
		out.Data = z.Bytes()
		out.Compressed = true
		out.Sizes[provisioning.SizeTotal] = len(out.Data)
	}
	if opts.MaxBytes > 0 && len(out.Data) > opts.MaxBytes {
		return nil, provisioning.TooLarge("%s output is %d bytes, budget %d", Format, len(out.Data), opts.MaxBytes)
	}
	return out, nil
}

// estimate sizes the output buffer close to what rendering writes, so it
// grows at most once: each byte allocated is garbage collection work later,
// so it counts the layout's six-space indent per content line rather than
// padding by a ratio.
func estimate(p *provisioning.Plan) int {
	// Header, module keys, the placeholder file, the sentinel command.
	n := 448 + 3*len(p.Sentinel)
	for i := range p.Files {
		f := &p.Files[i]
		n += 64 + len(f.Path) + len(f.Owner) + len(f.Content) + 6*(strings.Count(f.Content, "\n")+1)
	}
	for i := range p.Commands {
		n += 8 + len(p.Commands[i].Script)*9/8
	}
	for _, c := range p.BootCommands {
		n += 8 + len(c)*9/8
	}
	for i := range p.Users {
		u := &p.Users[i]
		n += 96 + len(u.Name) + len(u.Passwd) + len(u.Gecos) + len(u.Groups) + len(u.HomeDir) + len(u.Shell) + len(u.PrimaryGroup) + len(u.Sudo)
		for _, k := range u.SSHAuthorizedKeys {
			n += 8 + len(k)
		}
	}
	if p.NTP != nil {
		n += 32
		for _, s := range p.NTP.Servers {
			n += 8 + len(s)
		}
	}
	if d := p.Disks; d != nil {
		n += 32 + 96*len(d.Partitions) + 128*len(d.Filesystems)
	}
	for _, m := range p.Mounts {
		n += 8
		for _, v := range m {
			n += 8 + len(v)
		}
	}
	return n + n/64
}
