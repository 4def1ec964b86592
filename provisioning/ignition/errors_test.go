package ignition_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/conformance"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// TestErrorClasses: every error class of both dialects matches
// provisioning.ErrInvalid or ErrUnsupported, this package's sentinel where
// there is one, and unwraps to Problems naming the field.
func TestErrorClasses(t *testing.T) {
	windows := func() *provisioning.Plan {
		p := basePlan()
		p.Files[0].Path = `C:\k\node.json`
		return p
	}
	for _, tc := range []struct {
		name            string
		plan            func() *provisioning.Plan
		opts            provisioning.Options
		invalid, unsupp bool
		also            error
		path            string // "" when the error is not Problems
	}{
		{name: "legacy nil plan", plan: nilPlan, opts: legacy, invalid: true, also: provisioning.ErrNilPlan},
		{name: "v3 nil plan", plan: nilPlan, opts: v3, invalid: true, also: provisioning.ErrNilPlan},
		{name: "unknown version", plan: basePlan, opts: provisioning.Options{Version: "2.2.0"}, unsupp: true, also: ignition.ErrUnknownVersion, path: "options.version"},
		{name: "unknown version, nil plan", plan: nilPlan, opts: provisioning.Options{Version: "2.2.0"}, invalid: true, also: provisioning.ErrNilPlan},
		{name: "legacy compress", plan: basePlan, opts: provisioning.Options{Version: provisioning.VersionCABPK, Compress: true}, unsupp: true, also: provisioning.ErrCompressionUnsupported, path: "options.compress"},
		{name: "legacy boot commands", plan: func() *provisioning.Plan { p := basePlan(); p.BootCommands = []string{"true"}; return p }, opts: legacy, unsupp: true, path: "bootCommands"},
		{name: "v3 windows path", plan: windows, opts: v3, unsupp: true, path: "spec.files[0].path"},
		{name: "legacy empty file path", plan: func() *provisioning.Plan { p := basePlan(); p.Files[0].Path = ""; return p }, opts: legacy, invalid: true, path: "spec.files[0].path"},
		{name: "v3 relative path (a hazard, an error here)", plan: func() *provisioning.Plan { p := basePlan(); p.Files[0].Path = "etc/a"; return p }, opts: v3, invalid: true, path: "spec.files[0].path"},
		{name: "v3 sentinel without bootstrap", plan: func() *provisioning.Plan { p := basePlan(); p.Commands = p.Commands[:1]; return p }, opts: v3, invalid: true, path: "sentinel"},
		{name: "v3 additional config not Butane or JSON", plan: basePlan, opts: provisioning.Options{Version: "3.4.0", AdditionalConfig: []byte("storage: [")}, invalid: true, also: ignition.ErrAdditionalConfig, path: "additionalConfig"},
		{name: "v3 additional config replacing the bootstrap", plan: basePlan, opts: provisioning.Options{Version: "3.4.0",
			AdditionalConfig: []byte(`{"ignition":{"version":"3.4.0","config":{"replace":{"source":"https://example.invalid/x"}}}}`)},
			invalid: true, also: ignition.ErrAdditionalConfig, path: "additionalConfig"},
		{name: "v3 Butane without ignition/butane linked", plan: basePlan, opts: provisioning.Options{Version: "3.4.0", AdditionalConfig: []byte("variant: flatcar\nversion: 1.1.0\n")}, unsupp: true, also: ignition.ErrButaneNotLinked, path: "additionalConfig"},
		{name: "legacy additional config that does not parse", plan: basePlan, opts: provisioning.Options{Version: provisioning.VersionCABPK, AdditionalConfig: []byte("storage: [")}, invalid: true, also: ignition.ErrAdditionalConfig, path: "additionalConfig"},
		{name: "legacy over budget", plan: basePlan, opts: provisioning.Options{Version: provisioning.VersionCABPK, MaxBytes: 10}, invalid: true, also: provisioning.ErrTooLarge},
		{name: "v3 over budget", plan: basePlan, opts: provisioning.Options{Version: "3.4.0", MaxBytes: 10}, invalid: true, also: provisioning.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &ignition.Renderer{}
			out, err := r.Render(tc.plan(), tc.opts)
			if err == nil {
				t.Fatalf("rendered %d bytes", len(out.Data))
			}
			require.NoError(t, conformance.Classes(err, tc.invalid, tc.unsupp, tc.also))
			check := r.Check(tc.plan(), tc.opts).Err()
			if tc.path == "" {
				if errors.Is(tc.also, provisioning.ErrNilPlan) {
					require.NoError(t, conformance.Classes(check, tc.invalid, tc.unsupp, tc.also))
				}
				return
			}
			var ps provisioning.Problems
			if !errors.As(err, &ps) || !hasPath(ps, tc.path) {
				t.Fatalf("errors.As(*Problems) = %v, want a problem at %s", ps, tc.path)
			}
			require.NoError(t, conformance.Classes(check, tc.invalid, tc.unsupp, tc.also))
		})
	}
}

func TestOptionOriginsNameTheInput(t *testing.T) {
	origins := provisioning.OptionOrigins{
		Version:          provisioning.NewPath("metadata", "annotations").Key("nodeboot.dev/ignition-version"),
		AdditionalConfig: provisioning.NewPath("spec", "ignition", "containerLinuxConfig", "additionalConfig"),
	}
	for _, tc := range []struct {
		opts provisioning.Options
		want string
	}{
		{provisioning.Options{Version: "9.9.9", Origins: origins}, "metadata.annotations[nodeboot.dev/ignition-version]"},
		{provisioning.Options{Version: "3.5.0", AdditionalConfig: []byte("nope"), Origins: origins}, "spec.ignition.containerLinuxConfig.additionalConfig"},
		{provisioning.Options{Version: provisioning.VersionCABPK, AdditionalConfig: []byte("storage: ["), Origins: origins}, "spec.ignition.containerLinuxConfig.additionalConfig"},
	} {
		_, err := (&ignition.Renderer{}).Render(basePlan(), tc.opts)
		var ps provisioning.Problems
		if !errors.As(err, &ps) || !hasPath(ps, tc.want) {
			t.Errorf("%+v: got %v, want a problem at %s", tc.opts.Version, err, tc.want)
		}
	}
}

func TestV3CompressedKeepsJSON(t *testing.T) {
	out, err := (&ignition.Renderer{}).Render(basePlan(), provisioning.Options{Version: "3.4.0", Compress: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Compressed || out.Data[0] != '{' || out.Sizes[provisioning.SizeUncompressed] == 0 || out.Sizes[provisioning.SizeTotal] != len(out.Data) {
		t.Fatalf("Compressed %v, first byte %q, sizes %v", out.Compressed, out.Data[0], out.Sizes)
	}
}

var (
	v3     = provisioning.Options{Version: "3.4.0"}
	legacy = provisioning.Options{Version: provisioning.VersionCABPK}
)

func nilPlan() *provisioning.Plan { return nil }

func hasPath(ps provisioning.Problems, path string) bool {
	for _, p := range ps {
		if p.Path.String() == path {
			return true
		}
	}
	return false
}
