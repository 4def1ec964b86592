package catalog

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"text/template"
)

//go:embed manifests/*.yaml
var manifests embed.FS

// Names of the built-in add-ons.
const (
	NodeLocalDNS = "nodelocaldns"
	Flannel      = "flannel"
)

// release is one version of a built-in: its template and how Params become
// the template's values.
type release struct {
	version string
	file    string
	values  func(Params) (any, error)
}

// builtins lists every release, newest first per add-on.
var builtins = map[string][]release{
	NodeLocalDNS: {{version: "1.26.4", file: "manifests/nodelocaldns-1.26.4.yaml", values: nodeLocalDNSValues}},
	Flannel: {
		{version: "v0.28.4", file: "manifests/flannel-v0.28.4.yaml", values: flannelValues},
		{version: "v0.26.7", file: "manifests/flannel-v0.26.7.yaml", values: flannelValues},
	},
}

var templates = parseAll()

func parseAll() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, rs := range builtins {
		for _, r := range rs {
			raw, err := manifests.ReadFile(r.file)
			if err != nil {
				panic(fmt.Sprintf("catalog: embedded %s: %v", r.file, err))
			}
			out[r.file] = template.Must(template.New(r.file).Option("missingkey=error").Parse(string(raw)))
		}
	}
	return out
}

// Rendered is a built-in add-on rendered for one cluster.
type Rendered struct {
	Name    string
	Version string
	// Manifest is multi-document YAML.
	Manifest []byte
}

// Names lists the built-in add-ons, sorted.
func Names() []string {
	out := make([]string, 0, len(builtins))
	for n := range builtins {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Versions lists the versions of a built-in, newest first.
func Versions(name string) ([]string, error) {
	rs, ok := builtins[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %v)", ErrUnknownBuiltin, name, Names())
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.version
	}
	return out, nil
}

func lookup(name, version string) (release, error) {
	versions, err := Versions(name)
	if err != nil {
		return release{}, err
	}
	for _, r := range builtins[name] {
		if version == "" || r.version == version {
			return r, nil
		}
	}
	return release{}, fmt.Errorf("%w %s: %q (known: %v)", ErrUnknownVersion, name, version, versions)
}

// Template returns the resolved version and the unrendered template of a
// built-in; version "" is the newest.
func Template(name, version string) (string, []byte, error) {
	r, err := lookup(name, version)
	if err != nil {
		return "", nil, err
	}
	raw, err := manifests.ReadFile(r.file)
	return r.version, raw, err
}

// Render renders a built-in for one cluster; version "" is the newest.
// Invalid parameters return a *ParamError.
func Render(name, version string, p Params) (*Rendered, error) {
	r, err := lookup(name, version)
	if err != nil {
		return nil, err
	}
	if err := checkImageRepository(p.ImageRepository); err != nil {
		return nil, err
	}
	values, err := r.values(p)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := templates[r.file].Execute(&buf, values); err != nil {
		return nil, fmt.Errorf("render built-in %s %s: %w", name, r.version, err)
	}
	manifest := buf.Bytes()
	if p.ImageRepository != "" {
		manifest = rewriteImages(manifest, p.ImageRepository)
	}
	return &Rendered{Name: name, Version: r.version, Manifest: manifest}, nil
}

// imageLine is a container's image in the catalog's manifests: one
// "image:" key per line, its value a plain scalar.
var imageLine = regexp.MustCompile(`(?m)^(\s*(?:- )?image: )"?([^\s"]+)"?$`)

// rewriteImages puts every image under repo, keeping its name and tag.
func rewriteImages(manifest []byte, repo string) []byte {
	return imageLine.ReplaceAllFunc(manifest, func(line []byte) []byte {
		m := imageLine.FindSubmatch(line)
		ref := string(m[2])
		name := ref[strings.LastIndexByte(ref, '/')+1:]
		return []byte(string(m[1]) + repo + "/" + name)
	})
}
