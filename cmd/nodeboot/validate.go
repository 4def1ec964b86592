package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/webhooks/admission"
	"sigs.k8s.io/cluster-api/feature"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/bootstrap/manifest"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/provisioning"
)

// defaultFeatureGates are the gates validate assumes the management cluster's
// CABPK (or nodeboot manager) runs with: Ignition is accepted, as nodeboot
// renders it. --feature-gates overrides them.
const defaultFeatureGates = "KubeadmBootstrapFormatIgnition=true"

// parsedInput is one input file: its objects and the add-on extension, if any.
type parsedInput struct {
	set *manifest.Set
	ext *addonsctrl.Extension
}

func parseInput(input []byte, opts addonsctrl.ExtensionOptions) (*parsedInput, error) {
	set, err := manifest.Parse(bytes.NewReader(input))
	if err != nil {
		return nil, err
	}
	objs, err := readAddonObjects(input)
	if err != nil {
		return nil, err
	}
	ext, err := objs.extension(opts)
	if err != nil {
		return nil, err
	}
	return &parsedInput{set: set, ext: ext}, nil
}

// configs are the KubeadmConfigs to work on: the one called name, or all of
// them when name is empty.
func (p *parsedInput) configs(name string) ([]*bootstrapv1.KubeadmConfig, error) {
	if name == "" {
		if len(p.set.Configs) == 0 {
			return nil, errors.New("the input has no KubeadmConfig")
		}
		return p.set.Configs, nil
	}
	var out []*bootstrapv1.KubeadmConfig
	for _, c := range p.set.Configs {
		if c.Name == name {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no KubeadmConfig named %q in the input", name)
	}
	return out, nil
}

func configRef(cfg *bootstrapv1.KubeadmConfig) string {
	ns := cfg.Namespace
	if ns == "" {
		ns = "default"
	}
	return "KubeadmConfig " + ns + "/" + cfg.Name
}

// renderConfig builds and renders one KubeadmConfig of the input as render
// does (add-on extension included). manifest.Set.Input picks its config by
// name; a view of the Set holding only cfg makes that unambiguous even when
// two namespaces use the same name.
func (p *parsedInput) renderConfig(cfg *bootstrapv1.KubeadmConfig, strict bool) (*provisioning.Output, error) {
	view := *p.set
	view.Configs = []*bootstrapv1.KubeadmConfig{cfg}
	in, err := view.Input("")
	if err != nil {
		return nil, err
	}
	in.Strict = strict
	ctx := context.Background()
	if p.ext != nil {
		if err := p.ext.MutateConfig(ctx, in.Cluster, in.Config); err != nil {
			return nil, withRef(configRef(cfg), err)
		}
	}
	res, err := bootstrap.Build(ctx, *in)
	if err != nil {
		return nil, withRef(configRef(cfg), err)
	}
	if p.ext != nil {
		if err := p.ext.MutatePlan(ctx, in.Cluster, in.Config, res); err != nil {
			return nil, withRef(configRef(cfg), err)
		}
	}
	out, err := res.Render()
	if err != nil {
		return nil, withRef(configRef(cfg), err)
	}
	if err := checkOutputSize(configRef(cfg), out.Data); err != nil {
		return nil, err
	}
	return out, nil
}

// refError is an error that does not name its object, with the object.
type refError struct {
	ref string
	err error
}

func (e *refError) Error() string { return e.ref + ": " + e.err.Error() }
func (e *refError) Unwrap() error { return e.err }

func withRef(ref string, err error) error {
	var invalid *bootstrap.InvalidError
	if errors.As(err, &invalid) {
		return err
	}
	return &refError{ref: ref, err: err}
}

// problemLines are an error's lines as render prints them: one per problem,
// "Kind ns/name: field: message".
func problemLines(err error) []string {
	var invalid *bootstrap.InvalidError
	if errors.As(err, &invalid) {
		out := make([]string, len(invalid.Problems))
		for i, p := range invalid.Problems {
			out[i] = p.Object.String() + ": " + p.Problem.String()
		}
		return out
	}
	return strings.Split(err.Error(), "\n")
}

func warningLines(ref string, ws provisioning.Problems) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = "warning: " + ref + ": " + w.String()
	}
	return out
}

// webhookLines are CABPK's admission webhook errors for the spec.
func webhookLines(cfg *bootstrapv1.KubeadmConfig) []string {
	errs := admission.Validate(&cfg.Spec, false, field.NewPath("spec"))
	out := make([]string, len(errs))
	for i, e := range errs {
		// Not e.Error(): the bad value may be a whole file, secrets included.
		out[i] = configRef(cfg) + ": " + e.Field + ": " + e.Type.String() + ": " + e.Detail + " (webhook)"
	}
	return out
}

type validateFlags struct {
	inputFlags
	gates string
}

// validate reports, for every KubeadmConfig of the input (or the one --name
// picks), what CABPK's webhook rejects, what nodeboot cannot build or render,
// and every render warning, one line each on standard output. The rendered
// data itself is never printed.
func validate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f validateFlags
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.add(fs, "validate only the KubeadmConfig with this name (default: every KubeadmConfig of the input)")
	fs.StringVar(&f.gates, "feature-gates", defaultFeatureGates, "Cluster API feature gates the webhook checks run with, as the manager's --feature-gates")
	if !f.parse("validate", fs, args, stderr) {
		return 2
	}
	if err := setFeatureGates(f.gates); err != nil {
		fmt.Fprintf(stderr, "nodeboot validate: --feature-gates: %v\n", err)
		return 2
	}
	input, err := readInput(f.file, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "nodeboot validate: %v\n", err)
		return 1
	}
	p, err := parseInput(input, f.addons)
	var cfgs []*bootstrapv1.KubeadmConfig
	if err == nil {
		cfgs, err = p.configs(f.name)
	}
	if err != nil {
		for _, l := range problemLines(err) {
			fmt.Fprintln(stdout, l)
		}
		return 1
	}
	valid, warnings := 0, 0
	for _, cfg := range cfgs {
		// The webhook sees the object as stored, before nodeboot defaults it.
		hooks := webhookLines(cfg)
		lines := hooks
		out, err := p.renderConfig(cfg, f.strict)
		if err != nil {
			lines = append(lines, problemLines(err)...)
		} else {
			ws := warningLines(configRef(cfg), out.Warnings)
			warnings += len(ws)
			lines = append(lines, ws...)
		}
		for _, l := range lines {
			fmt.Fprintln(stdout, l)
		}
		// Valid is decided from the findings, not by reading back the lines.
		if err == nil && len(hooks) == 0 {
			valid++
		}
	}
	fmt.Fprintf(stdout, "valid: %d/%d, warnings: %d\n", valid, len(cfgs), warnings)
	if valid != len(cfgs) {
		return 1
	}
	return 0
}

// setFeatureGates checks "Gate=bool,..." before setting it: a failed Set of
// the process-wide gates keeps the bad entry.
func setFeatureGates(value string) error {
	known := feature.MutableGates.GetAll()
	for _, kv := range strings.Split(value, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("%q: want Gate=true|false", kv)
		}
		if _, ok := known[featuregate.Feature(strings.TrimSpace(k))]; !ok {
			return fmt.Errorf("unrecognized feature gate %q", strings.TrimSpace(k))
		}
		if _, err := strconv.ParseBool(strings.TrimSpace(v)); err != nil {
			return fmt.Errorf("%q: want Gate=true|false", kv)
		}
	}
	return feature.MutableGates.Set(value)
}
