package ignitionv3

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/coreos/ignition/v2/config/merge"
	v33 "github.com/coreos/ignition/v2/config/v3_3"
	v33types "github.com/coreos/ignition/v2/config/v3_3/types"
	v34 "github.com/coreos/ignition/v2/config/v3_4"
	v34types "github.com/coreos/ignition/v2/config/v3_4/types"
	v35 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/coreos/vcontext/report"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// v3Name names the native dialect in problems.
const v3Name = ignition.Format + " (Ignition v3)"

// dialect is one Ignition v3 spec version: its parser, which accepts that
// version and older ones (translating them up), and which validates.
type dialect struct {
	version         string
	parseCompatible func([]byte) (any, report.Report, error)
	// decode reads JSON this package generated into the version's types,
	// without validation: the generated part is validated by construction.
	decode func([]byte) (any, error)
}

var dialects = []dialect{
	{"3.3.0", func(b []byte) (any, report.Report, error) { return v33.ParseCompatibleVersion(b) }, decodeAs[v33types.Config]},
	{"3.4.0", func(b []byte) (any, report.Report, error) { return v34.ParseCompatibleVersion(b) }, decodeAs[v34types.Config]},
	{"3.5.0", func(b []byte) (any, report.Report, error) { return v35.ParseCompatibleVersion(b) }, decodeAs[types.Config]},
}

func decodeAs[T any](b []byte) (any, error) {
	var cfg T
	err := json.Unmarshal(b, &cfg)
	return cfg, err
}

func checkV3(p *provisioning.Plan, opts provisioning.Options, d *dialect) (provisioning.Problems, any) {
	// Native Ignition is nodeboot's own mode: hazards stay errors.
	ps := p.Validate()
	provisioning.WarnLiteralJinja(&ps, p, v3Name)
	for i := range p.Files {
		if f := &p.Files[i]; provisioning.IsWindowsPath(f.Path) {
			provisioning.Unsupported(&ps, ignition.Format+" "+d.version, p.FilePath(i).Member("path"), "a Windows path (Ignition provisions Linux only)")
		} else if f.SpecialBits() {
			// Ignition drops them, with a warning in its log only.
			provisioning.Unsupported(&ps, ignition.Format+" "+d.version, provisioning.FieldPath(f.Origin, p.FilePath(i), "permissions"),
				"a mode with setuid, setgid or sticky bits (Ignition specs before 3.6.0 drop them)")
		}
	}
	if ps.Err() != nil {
		return ps, nil
	}
	b := &v3Builder{plan: p.WithCommandTemplates(), values: p.NodeValuesUsed()}
	b.build()
	ps = append(ps, b.ps...)
	addUserData(b, p, d, &ps)
	if p.NTP != nil {
		for i, s := range p.NTP.Servers {
			if s != "" && containsSpace(s) {
				ps.Errorf(p.SectionPath(provisioning.SectionNTP).Field("servers").Index(i), "must be one host name or address")
			}
		}
	}
	if ps.Err() != nil {
		return ps, nil
	}
	b.cfg.Ignition.Version = d.version
	// Everything a Plan needs exists since 3.3 and serialises the same in
	// every 3.x version's types, so the newest types carry any version.
	if r := validateGenerated(&b.cfg); r.IsFatal() {
		ps.Wrapf(provisioning.Path{}, ignition.ErrInvalidOutput, "%s", r.String())
		return ps, nil
	}
	if len(opts.AdditionalConfig) == 0 {
		return ps, &b.cfg
	}
	if !provisioning.CheckAdditionalConfigSize(&ps, opts) {
		return ps, nil
	}
	user := userConfig(opts.AdditionalConfig, opts.Strict || opts.StrictAdditionalConfig, d, opts.AdditionalConfigPath(), &ps)
	if user == nil {
		return ps, nil
	}
	protectGenerated(p, user, opts.AdditionalConfigPath(), &ps)
	if ps.Err() != nil {
		return ps, nil
	}
	// Merging needs the generated config in the user's version's types.
	raw, err := marshalJSON(b.cfg)
	if err != nil {
		ps.Wrapf(provisioning.Path{}, ignition.ErrInvalidOutput, "marshal Ignition config: %v", err)
		return ps, nil
	}
	cfg, err := d.decode(raw)
	if err != nil {
		ps.Wrapf(provisioning.Path{}, ignition.ErrInvalidOutput, "%v", err)
		return ps, nil
	}
	cfg, _ = merge.MergeStructTranscribe(cfg, user)
	return ps, cfg
}

func renderV3(p *provisioning.Plan, opts provisioning.Options, d *dialect) (*provisioning.Output, error) {
	ps, cfg := checkV3(p, opts, d)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	var data []byte
	var sizes map[string]int
	var err error
	if generated, ok := cfg.(*types.Config); ok {
		data, sizes, err = marshalSections(generated)
	} else {
		data, err = marshalJSON(cfg)
		sizes = v3Sizes(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: marshal Ignition %s config: %w", ignition.ErrInvalidOutput, d.version, err)
	}
	// The generated config is valid by construction (validateGenerated);
	// merged with the user's config it is something new, which Ignition's
	// parser validates whole.
	if len(opts.AdditionalConfig) > 0 {
		if _, r, err := d.parseCompatible(data); err != nil || r.IsFatal() {
			return nil, fmt.Errorf("%w: %v %s", ignition.ErrInvalidOutput, err, r.String()) //nolint:errorlint // err is often nil (a fatal report); the sentinel is what callers match
		}
	}
	out := &provisioning.Output{Data: data, Format: ignition.Format, Warnings: ps.Warnings(), Sizes: sizes}
	if opts.Compress || (opts.MaxBytes > 0 && len(data) > opts.MaxBytes) {
		wrapped, err := wrap(data, d)
		if err != nil {
			return nil, err
		}
		out.Sizes[provisioning.SizeUncompressed] = len(data)
		out.Sizes[provisioning.SizeTotal] = len(wrapped)
		out.Data = wrapped
	}
	if opts.MaxBytes > 0 && len(out.Data) > opts.MaxBytes {
		return nil, provisioning.TooLarge("%s %s output is %d bytes even gzip-wrapped (%d uncompressed), budget %d",
			v3Name, d.version, len(out.Data), len(data), opts.MaxBytes)
	}
	return out, nil
}

// wrap returns a small config whose ignition.config.replace is data as a
// gzip-compressed (best compression) base64 data: URL. It carries no
// verification hash: the content is inline, in the same user data, so a hash
// would only repeat what gzip's own CRC-32 already checks when Ignition
// inflates it, at 135 bytes of the budget.
func wrap(data []byte, d *dialect) ([]byte, error) {
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	_, _ = w.Write(data)
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("%w: gzip Ignition config: %w", ignition.ErrInvalidOutput, err)
	}
	var outer types.Config
	outer.Ignition.Version = d.version
	outer.Ignition.Config.Replace = types.Resource{
		Source:      ptrTo("data:;base64," + base64.StdEncoding.EncodeToString(z.Bytes())),
		Compression: ptrTo("gzip"),
	}
	raw, err := marshalJSON(outer)
	if err != nil {
		return nil, fmt.Errorf("%w: marshal wrapper config: %w", ignition.ErrInvalidOutput, err)
	}
	if _, r, err := d.parseCompatible(raw); err != nil || r.IsFatal() {
		return nil, fmt.Errorf("%w: wrapper: %v %s", ignition.ErrInvalidOutput, err, r.String()) //nolint:errorlint // as above
	}
	return raw, nil
}

// marshalJSON is json.Marshal without HTML escaping: '<', '>' and '&' stay
// one byte each rather than six (\u003c), which Ignition reads the same.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// marshalSections is marshalJSON(cfg) written one top-level section at a
// time, in the struct's field order, so the section sizes come without
// reading the output back.
func marshalSections(cfg *types.Config) ([]byte, map[string]int, error) {
	sections := [...]struct {
		key string
		v   any
	}{
		{"ignition", &cfg.Ignition}, {"kernelArguments", &cfg.KernelArguments}, {"passwd", &cfg.Passwd},
		{"storage", &cfg.Storage}, {"systemd", &cfg.Systemd},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	sizes := make(map[string]int, len(sections)+1)
	b.WriteByte('{')
	for i, s := range sections {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + s.key + `":`)
		start := b.Len()
		if err := enc.Encode(s.v); err != nil {
			return nil, nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		sizes[s.key] = b.Len() - start
	}
	b.WriteByte('}')
	sizes[provisioning.SizeTotal] = b.Len()
	return b.Bytes(), sizes, nil
}

// v3Sizes reports the bytes of each top-level section of the config.
func v3Sizes(data []byte) map[string]int {
	sizes := map[string]int{provisioning.SizeTotal: len(data)}
	var sections map[string]json.RawMessage
	if json.Unmarshal(data, &sections) == nil {
		for k, v := range sections {
			sizes[k] = len(v)
		}
	}
	return sizes
}

func containsSpace(s string) bool {
	return bytes.ContainsAny([]byte(s), " \t\n\r")
}
