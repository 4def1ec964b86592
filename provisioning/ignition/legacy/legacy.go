package legacy

import (
	"fmt"
	"strings"

	clct "github.com/flatcar/container-linux-config-transpiler/config"
	ign23types "github.com/flatcar/ignition/config/v2_3/types"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

func checkLegacy(p *provisioning.Plan, opts provisioning.Options) provisioning.Problems {
	ps, _, _ := runLegacy(p, opts)
	return ps
}

// runLegacy validates the Plan, builds its CLC and reads the additional
// config: one pass that Check and Render share.
func runLegacy(p *provisioning.Plan, opts provisioning.Options) (provisioning.Problems, *legacyBuilder, *ign23types.Config) {
	// CABPK's dialect: hazards are warnings; what CABPK's own transpiler
	// refuses (a relative or Windows path, among others) still fails in
	// renderLegacy, where the same transpiler checks the same config.
	ps := p.Validate().Tolerate()
	// CABPK's CLC has no metadata wiring for the Plan's files and no
	// config merge for user data: both would change its bytes.
	provisioning.RefuseNodeValues(&ps, p, legacyName)
	provisioning.RefuseUserData(&ps, p, legacyName)
	if opts.Compress {
		provisioning.UnsupportedErr(&ps, provisioning.ErrCompressionUnsupported, legacyName, provisioning.NewPath("options", "compress"), "compressed output (Ignition 2.3 has no compressed config references; use Ignition v3)")
	}
	b := &legacyBuilder{plan: p}
	b.build()
	ps = append(ps, b.ps...).Settle()
	var extra *ign23types.Config
	if len(opts.AdditionalConfig) > 0 && provisioning.CheckAdditionalConfigSize(&ps, opts) {
		cfg, warnings, err := cachedCLCToIgnition(opts.AdditionalConfig, opts.Strict || opts.StrictAdditionalConfig)
		switch {
		case err != nil:
			ps.Wrapf(opts.AdditionalConfigPath(), ignition.ErrAdditionalConfig, "%v", err)
		case warnings != "":
			ps.Warnf(opts.AdditionalConfigPath(), "%s", warnings)
		}
		extra = &cfg
	}
	return ps, b, extra
}

func renderLegacy(p *provisioning.Plan, opts provisioning.Options) (*provisioning.Output, error) {
	ps, b, extra := runLegacy(p, opts)
	if errs := ps.Errors(); len(errs) > 0 {
		// CABPK converts its own CLC before the additional config and stops
		// there: name what its transpiler refuses in it too.
		cfg := legacyIgnition(&b.cfg)
		return nil, append(errs, legacyFieldProblems(p, &cfg)...)
	}
	// CABPK converts its own CLC strictly: any finding fails the render.
	cfg := legacyIgnition(&b.cfg)
	if r := validateLegacy(&b.cfg, &cfg); len(r.Entries) > 0 {
		if ps := legacyFieldProblems(p, &cfg); len(ps) > 0 {
			return nil, ps
		}
		return nil, fmt.Errorf("%w: legacy Container Linux Config: %s", ignition.ErrInvalidOutput, strings.TrimSpace(r.String()))
	}
	files, units := len(cfg.Storage.Files), len(cfg.Systemd.Units)
	if extra != nil {
		cfg = appendLegacy(&cfg, extra)
	}
	data := legacyJSONFrom(&cfg, files) // legacyIgnition wrote their sources
	out := &provisioning.Output{
		Data:     data,
		Format:   ignition.Format,
		Warnings: ps.Warnings(),
		Sizes:    legacySizes(&cfg, files, units, len(data)),
	}
	if opts.MaxBytes > 0 && len(data) > opts.MaxBytes {
		return nil, provisioning.TooLarge("%s output is %d bytes, budget %d (Ignition v3 can compress it)", legacyName, len(data), opts.MaxBytes)
	}
	return out, nil
}

// clcToIgnition transpiles user CLC as CABPK does: with strict, any finding
// is an error; otherwise only fatal ones are, and the rest come back as text.
func clcToIgnition(data []byte, strict bool) (ign23types.Config, string, error) {
	// The fast path answers only when the transpiler would report nothing,
	// so strict or not makes no difference there.
	if cfg, ok := fastCLC(data); ok {
		return cfg, "", nil
	}
	cfg, ast, reports := clct.Parse(data)
	if (len(reports.Entries) > 0 && strict) || reports.IsFatal() {
		return ign23types.Config{}, "", fmt.Errorf("error parsing Container Linux Config: %v", reports.String())
	}
	ign, r := clct.Convert(cfg, "", ast)
	if (len(r.Entries) > 0 && strict) || r.IsFatal() {
		return ign23types.Config{}, "", fmt.Errorf("error converting to Ignition: %v", r.String())
	}
	reports.Merge(r)
	return ign, strings.TrimSpace(reports.String()), nil
}

// legacySizes reports what the budget is spent on: the generated files and
// units, the user's additional config, and the total.
func legacySizes(cfg *ign23types.Config, generatedFiles, generatedUnits, total int) map[string]int {
	sizes := map[string]int{provisioning.SizeTotal: total}
	for i, f := range cfg.Storage.Files {
		key := provisioning.SizeFiles
		if i >= generatedFiles {
			key = provisioning.SizeAdditionalConfig
		}
		sizes[key] += len(f.Path) + len(f.Contents.Source)
	}
	for i, u := range cfg.Systemd.Units {
		key := provisioning.SizeUnits
		if i >= generatedUnits {
			key = provisioning.SizeAdditionalConfig
		}
		sizes[key] += len(u.Name) + len(u.Contents)
	}
	return sizes
}
