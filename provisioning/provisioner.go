package provisioning

import (
	"fmt"
	"sort"
	"sync"
)

// Provisioner renders a Plan into the bytes one provisioning system consumes.
//
// Implementations are stateless and safe for concurrent use. Each one declares
// a compile-time assertion: var _ provisioning.Provisioner = (*Renderer)(nil).
type Provisioner interface {
	// Format is the name stored next to the bytes, e.g. "cloud-config".
	Format() string
	// Check returns every feature of the Plan this provisioner cannot express,
	// as errors naming the provisioner and the field, and every construct it
	// can express but that the target system will likely mishandle, as warnings.
	Check(plan *Plan, opts Options) Problems
	// Render validates the Plan, runs Check and, when neither found an error,
	// returns the rendered bytes. It never drops a feature silently.
	Render(plan *Plan, opts Options) (*Output, error)
}

// Options tune a rendering. The zero Options are nodeboot's own mode, the
// one a provider that is not CABPK should use: every provisioner renders its
// plain dialect (cloud-config "plain", Ignition DefaultVersion of v3, the
// script), where what Validate calls a hazard is an error. CABPK's dialects
// are chosen explicitly with Version VersionCABPK (package bootstrap does so
// for KubeadmConfigs); there hazards are warnings, because CABPK renders
// them, unless Strict. What each setting does per provisioner (and which
// provisioner refuses it, as an ErrUnsupported problem naming the option)
// is the table in docs/provisioning-api.md; in short:
//
//	option                  cloud-config                    ignition                          script
//	Version                 "" = "plain", or VersionCABPK   "" = 3.4.0, 3.x, or VersionCABPK  "" only
//	Strict                  every warning is an error, in every provisioner and dialect
//	StrictAdditionalConfig  -                               CLC/Butane warnings are errors    -
//	Corrections             CABPK dialect: escape jinja     none                              none
//	Compress                gzip the whole user data        v3: gzip into a wrapper config    unsupported
//	MaxBytes                budget on Data (ErrTooLarge)    same                              same
//	AdditionalConfig        unsupported (error)             v3: Butane or Ignition JSON; CABPK: Container Linux Config
//	Origins                 input paths for Version and AdditionalConfig problems, in every provisioner
//
// Provisioners other than these document their own column in their package.
type Options struct {
	// Corrections opts into output that fixes known hazards of the default,
	// compatibility-first output (each provisioner documents which).
	Corrections bool
	// Compress asks for compressed output where the format allows it;
	// Output.Compressed says whether Data itself is compressed.
	Compress bool
	// Version selects a dialect or spec version; empty is the default dialect.
	Version string
	// MaxBytes, when positive, is a budget the output must fit in; an output
	// over it is an error matching ErrTooLarge.
	MaxBytes int
	// AdditionalConfig is native configuration of the target system that the
	// provisioner merges over its own output, the user's config winning; at
	// most MaxAdditionalConfigBytes.
	AdditionalConfig []byte
	// Strict turns every warning into an error, in every provisioner and
	// dialect: in CABPK's dialects the hazards CABPK renders anyway (a
	// "{{ }}" in a file or a "NOPASSWD: ALL" that make cloud-init run
	// nothing) are then refused, each at its field.
	Strict bool
	// StrictAdditionalConfig turns only the warnings of translating
	// AdditionalConfig (Container Linux Config, Butane) into errors: what
	// CABPK's containerLinuxConfig.strict means. Strict implies it.
	StrictAdditionalConfig bool
	// Origins names the input fields Version and AdditionalConfig came
	// from, so problems about them name what the user wrote.
	Origins OptionOrigins
}

// MaxAdditionalConfigBytes bounds Options.AdditionalConfig, which a
// provisioner parses and merges whole before MaxBytes can apply: eight times
// what CABPK's CRD allows a KubeadmConfig (32 KiB), for providers whose
// native configs carry files inline, and far from the seconds and gigabytes
// a config of megabytes costs to translate.
const MaxAdditionalConfigBytes = 256 << 10

// CheckAdditionalConfigSize reports an AdditionalConfig over
// MaxAdditionalConfigBytes at its path, as an ErrInvalid problem; a
// provisioner that reads AdditionalConfig calls it before parsing.
func CheckAdditionalConfigSize(ps *Problems, opts Options) bool {
	if n := len(opts.AdditionalConfig); n > MaxAdditionalConfigBytes {
		ps.Errorf(opts.AdditionalConfigPath(), "is %d bytes, at most %d", n, MaxAdditionalConfigBytes)
		return false
	}
	return true
}

// VersionCABPK is the Options.Version of CABPK's dialect, in every
// provisioner that has one (cloud-config, and Ignition's legacy 2.3 through
// a Container Linux Config): CABPK's bytes for every input CABPK renders,
// hazards as warnings unless Strict. Package bootstrap chooses it for
// KubeadmConfigs; other providers should leave Version empty.
const VersionCABPK = "cabpk"

// OptionOrigins are the input field paths of Options; a zero Path leaves
// the option's own path (options.version, additionalConfig).
type OptionOrigins struct {
	Version          Path
	AdditionalConfig Path
}

// VersionPath is where problems about Version are reported.
func (o *Options) VersionPath() Path {
	if !o.Origins.Version.IsZero() {
		return o.Origins.Version
	}
	return NewPath("options", "version")
}

// AdditionalConfigPath is where problems about AdditionalConfig are
// reported.
func (o *Options) AdditionalConfigPath() Path {
	if !o.Origins.AdditionalConfig.IsZero() {
		return o.Origins.AdditionalConfig
	}
	return NewPath("additionalConfig")
}

// Keys of Output.Sizes. Every provisioner reports SizeTotal; the others
// appear where the provisioner can tell that part apart. Ignition v3 reports
// each top-level section of its config under its JSON key ("ignition",
// "passwd", "storage", "systemd", "kernelArguments").
const (
	// SizeTotal is len(Output.Data): what a budget is measured against.
	SizeTotal = "total"
	// SizeUncompressed is the size of Data before compression, when
	// Output.Compressed.
	SizeUncompressed = "uncompressed"
	// SizeFiles is what the Plan's files take (cloud-config: the
	// write_files section; Ignition: paths and contents).
	SizeFiles = "files"
	// SizeWriteFiles is cloud-config's write_files section.
	SizeWriteFiles = "write_files"
	// SizeCommands is what the commands take (cloud-config: runcmd and
	// bootcmd).
	SizeCommands = "commands"
	// SizeUnits is what systemd units take (legacy Ignition).
	SizeUnits = "units"
	// SizeAdditionalConfig is what the user's AdditionalConfig adds.
	SizeAdditionalConfig = "additionalConfig"
	// SizeUserData is what the Plan's UserData adds, with the framing
	// that carries it (cloud-config: the MIME parts besides the Plan's).
	SizeUserData = "userData"
)

// Output is what a Provisioner produced.
type Output struct {
	// Data is the exact bytes to hand to the node.
	Data []byte
	// Format names the data, e.g. "cloud-config" or "ignition".
	Format string
	// Compressed says Data itself is gzip, as cloud-config user data is
	// with Options.Compress: whoever hands Data on must pass it as binary
	// (cloud-init detects gzip itself). Ignition v3 compresses its config
	// inside a small plain-JSON wrapper config, so Data stays JSON and
	// Compressed false; Sizes[SizeUncompressed] tells both cases apart.
	Compressed bool
	// Warnings are the hazards Check found; the output was still produced.
	Warnings Problems
	// Sizes reports the byte size of named parts of the output (the Size*
	// keys; SizeTotal is always present) so callers can see what a size
	// budget is spent on.
	Sizes map[string]int
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Provisioner{}
)

// Register makes a Provisioner available under its Format. Registering the same
// format twice panics: it is a programming error caught at init time.
func Register(p Provisioner) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[p.Format()]; dup {
		panic(fmt.Sprintf("provisioning: format %q registered twice", p.Format()))
	}
	registry[p.Format()] = p
}

// Get returns the Provisioner registered for format.
func Get(format string) (Provisioner, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	if p, ok := registry[format]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("%w: %q (registered: %v)", ErrUnknownFormat, format, formatsLocked())
}

// Formats lists the registered formats, sorted.
func Formats() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return formatsLocked()
}

func formatsLocked() []string {
	out := make([]string, 0, len(registry))
	for f := range registry {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// Unsupported is the problem a provisioner reports for a Plan feature it cannot
// express. The message names the provisioner, so the error stays clear when it
// travels up to a condition or a CLI line.
// The problem matches ErrUnsupported.
func Unsupported(ps *Problems, provisioner string, path Path, feature string) {
	UnsupportedErr(ps, ErrUnsupported, provisioner, path, feature)
}

// UnsupportedErr is Unsupported with a more specific sentinel err, which
// must match ErrUnsupported (see NewError).
func UnsupportedErr(ps *Problems, err error, provisioner string, path Path, feature string) {
	*ps = append(*ps, Problem{
		Path: path, Severity: SeverityError, Err: err,
		Message: fmt.Sprintf("%s is not supported by the %s provisioner", feature, provisioner),
	})
}
