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

// Options tune a rendering. Zero values give each provisioner's default,
// compatibility-first output.
type Options struct {
	// Corrections opts into output that fixes known hazards of the default,
	// compatibility-first output (each provisioner documents which).
	Corrections bool
	// Compress asks for compressed output where the format allows it.
	Compress bool
	// Version selects a dialect or spec version; empty is the default dialect.
	Version string
	// MaxBytes, when positive, is a budget the output must fit in.
	MaxBytes int
	// AdditionalConfig is native configuration of the target system that the
	// provisioner merges over its own output, the user's config winning.
	AdditionalConfig []byte
	// Strict turns warnings about AdditionalConfig into errors.
	Strict bool
}

// Output is what a Provisioner produced.
type Output struct {
	// Data is the exact bytes to hand to the node.
	Data []byte
	// Format names the data, e.g. "cloud-config" or "ignition".
	Format string
	// Warnings are the hazards Check found; the output was still produced.
	Warnings Problems
	// Sizes reports the byte size of named parts of the output ("total" is
	// always present) so callers can see what a size budget is spent on.
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
func Unsupported(ps *Problems, provisioner, path, feature string) {
	ps.Errorf(path, "%s is not supported by the %s provisioner", feature, provisioner)
}
