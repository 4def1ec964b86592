package ignition

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/coreos/ignition/v2/config/merge"
	v33 "github.com/coreos/ignition/v2/config/v3_3"
	v34 "github.com/coreos/ignition/v2/config/v3_4"
	v35 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/coreos/vcontext/report"

	"github.com/nodeboot/nodeboot/provisioning"
)

// v3Name names the native dialect in problems.
const v3Name = Format + " (Ignition v3)"

// dialect is one Ignition v3 spec version: its parser, which accepts that
// version and older ones (translating them up), and which validates.
type dialect struct {
	version         string
	parseCompatible func([]byte) (any, report.Report, error)
}

var dialects = []dialect{
	{"3.3.0", func(b []byte) (any, report.Report, error) { return v33.ParseCompatibleVersion(b) }},
	{"3.4.0", func(b []byte) (any, report.Report, error) { return v34.ParseCompatibleVersion(b) }},
	{"3.5.0", func(b []byte) (any, report.Report, error) { return v35.ParseCompatibleVersion(b) }},
}

func checkV3(p *provisioning.Plan, opts provisioning.Options, d *dialect) (provisioning.Problems, any) {
	// Native Ignition is nodeboot's own mode: hazards stay errors.
	ps := p.Validate()
	for i := range p.Files {
		if f := &p.Files[i]; provisioning.IsWindowsPath(f.Path) {
			provisioning.Unsupported(&ps, Format+" "+d.version, provisioning.FieldPath(f.Origin, fmt.Sprintf("files[%d]", i), "path"), "a Windows path (Ignition provisions Linux only)")
		}
	}
	if ps.Err() != nil {
		return ps, nil
	}
	b := &v3Builder{plan: p}
	b.build()
	ps = append(ps, b.ps...)
	if p.NTP != nil {
		for i, s := range p.NTP.Servers {
			if s != "" && containsSpace(s) {
				ps.Errorf(fmt.Sprintf("ntp.servers[%d]", i), "must be one host name or address")
			}
		}
	}
	if ps.Err() != nil {
		return ps, nil
	}
	b.cfg.Ignition.Version = d.version
	raw, err := marshalJSON(b.cfg)
	if err != nil {
		ps.Errorf("", "marshal Ignition config: %v", err)
		return ps, nil
	}
	// Re-reading through the dialect's parser gives its own types and runs
	// Ignition's validation on what we generated.
	cfg, r, err := d.parseCompatible(raw)
	if err != nil || r.IsFatal() {
		ps.Errorf("", "%v: %v %s", ErrInvalidOutput, err, r.String())
		return ps, nil
	}
	if len(opts.AdditionalConfig) > 0 {
		user := userConfig(opts.AdditionalConfig, opts.Strict, d, &ps)
		if user == nil {
			return ps, nil
		}
		cfg, _ = merge.MergeStructTranscribe(cfg, user)
	}
	return ps, cfg
}

func renderV3(p *provisioning.Plan, opts provisioning.Options, d *dialect) (*provisioning.Output, error) {
	ps, cfg := checkV3(p, opts, d)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	data, err := marshalJSON(cfg)
	if err != nil {
		return nil, fmt.Errorf("marshal Ignition %s config: %w", d.version, err)
	}
	// The generated config was validated when checkV3 read it back; only a
	// merge with the user's config makes something new to validate.
	if len(opts.AdditionalConfig) > 0 {
		if _, r, err := d.parseCompatible(data); err != nil || r.IsFatal() {
			return nil, fmt.Errorf("%w: %v %s", ErrInvalidOutput, err, r.String())
		}
	}
	out := &provisioning.Output{Data: data, Format: Format, Warnings: ps.Warnings(), Sizes: v3Sizes(data)}
	if opts.Compress || (opts.MaxBytes > 0 && len(data) > opts.MaxBytes) {
		wrapped, err := wrap(data, d)
		if err != nil {
			return nil, err
		}
		out.Sizes["uncompressed"] = len(data)
		out.Sizes["total"] = len(wrapped)
		out.Data = wrapped
	}
	if opts.MaxBytes > 0 && len(out.Data) > opts.MaxBytes {
		return nil, fmt.Errorf("%w: %s %s output is %d bytes even gzip-wrapped (%d uncompressed), budget %d",
			provisioning.ErrTooLarge, v3Name, d.version, len(out.Data), len(data), opts.MaxBytes)
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
		return nil, fmt.Errorf("gzip Ignition config: %w", err)
	}
	var outer types.Config
	outer.Ignition.Version = d.version
	outer.Ignition.Config.Replace = types.Resource{
		Source:      ptrTo("data:;base64," + base64.StdEncoding.EncodeToString(z.Bytes())),
		Compression: ptrTo("gzip"),
	}
	raw, err := marshalJSON(outer)
	if err != nil {
		return nil, fmt.Errorf("marshal wrapper config: %w", err)
	}
	if _, r, err := d.parseCompatible(raw); err != nil || r.IsFatal() {
		return nil, fmt.Errorf("%w: wrapper: %v %s", ErrInvalidOutput, err, r.String())
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

// v3Sizes reports the bytes of each top-level section of the config.
func v3Sizes(data []byte) map[string]int {
	sizes := map[string]int{"total": len(data)}
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
