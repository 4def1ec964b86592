package cloudinit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Per-node values in the plain dialect are cloud-init's own mechanism: the
// document gets cloud-init's "## template: jinja" header and each value is
// a jinja expression over cloud-init's instance data, as CABPK's users
// write {{ ds.meta_data.local_hostname }} by hand. Only the values are
// jinja: every other "{{", "{%" and "{#" of the document is escaped, so a
// Plan's literal text stays data, as without templates.
//
// A jinja expression is placed in the YAML text after marshalling (jinja
// runs on the text, before YAML is read), at a token the marshaller wrote.
// The scalars holding tokens are written double-quoted, whatever their
// content, so the expression escapes exactly what a double-quoted YAML
// scalar needs; values in runcmd are also single-quoted for the shell.

// jinjaHeader makes cloud-init render the document as a jinja template.
const jinjaHeader = "## template: jinja\n"

// jinjaSources are the instance data keys of each value: v1 keys where
// cloud-init standardises one, the datasource's meta-data otherwise (EC2
// and NoCloud's local-ipv4).
var jinjaSources = map[provisioning.NodeValue]string{
	provisioning.NodeName:       "v1.local_hostname",
	provisioning.NodeLocalIPv4:  "ds.meta_data.local_ipv4",
	provisioning.NodeInstanceID: "v1.instance_id",
}

// missingJinja is a shell pattern for what cloud-init writes for an
// undefined variable (CI_MISSING_JINJA_VAR/<name>), spelt so that the
// document does not hold the marker itself, which checkers look for.
const missingJinja = "CI_MISSING_JINJA_VA[R]"

// yamlDQ escapes jinja output for a double-quoted YAML scalar.
const yamlDQ = ` | replace("\\", "\\\\") | replace("\"", "\\\"")`

// jinjaValues holds the tokens of one render.
type jinjaValues struct {
	prefix string
	used   []provisioning.NodeValue
}

// newJinjaValues picks a token prefix no literal text of p contains: a
// hash of that text, which text cannot contain without containing its own
// hash.
func newJinjaValues(p *provisioning.Plan) *jinjaValues {
	h := sha256.New()
	for i := range p.Files {
		f := &p.Files[i]
		h.Write([]byte(f.Path + "\x00" + f.Content + "\x00"))
		for _, part := range f.Template {
			h.Write([]byte(part.Literal + "\x00"))
		}
	}
	for i := range p.Commands {
		h.Write([]byte(p.Commands[i].Script + "\x00"))
		for _, part := range p.Commands[i].Template {
			h.Write([]byte(part.Literal + "\x00"))
		}
	}
	return &jinjaValues{prefix: "nodebootvalue" + hex.EncodeToString(h.Sum(nil))[:20], used: p.NodeValuesUsed()}
}

// fileToken and shellToken stand for a value in file content and in a
// runcmd line.
func (j *jinjaValues) fileToken(v provisioning.NodeValue) string {
	return j.prefix + "f" + string(v) + "x"
}
func (j *jinjaValues) shellToken(v provisioning.NodeValue) string {
	return j.prefix + "s" + string(v) + "x"
}

// templatedFiles returns p with each File.Template expanded into Content
// with file tokens.
func (j *jinjaValues) templatedFiles(p *provisioning.Plan) *provisioning.Plan {
	q := *p
	q.Files = append([]provisioning.File(nil), p.Files...)
	for i := range q.Files {
		if f := &q.Files[i]; len(f.Template) > 0 {
			f.Content, f.Template = f.Template.Expand(j.fileToken), nil
		}
	}
	return &q
}

// runCmdPrologue exports every value the Plan uses for the commands, and
// stops the boot, naming the value, where the instance data lacks one:
// cloud-init writes a placeholder for an undefined variable, and a node
// named after it must not join.
func (j *jinjaValues) runCmdPrologue() []string {
	var out []string
	for _, v := range j.used {
		out = append(out, "export "+v.Env()+"="+j.shellToken(v))
	}
	for _, v := range j.used {
		out = append(out, `case "${`+v.Env()+`}" in ""|`+missingJinja+`*) echo "nodeboot: the instance metadata has no `+string(v)+` (`+jinjaSources[v]+`)" >&2; exit 1;; esac`)
	}
	return out
}

// marshal writes d as a jinja template: the scalars with tokens
// double-quoted, literal jinja escaped, the tokens replaced by expressions.
func (j *jinjaValues) marshal(d *plainDoc) ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(d); err != nil {
		return nil, err
	}
	j.quote(&n)
	var b bytes.Buffer
	b.WriteString(jinjaHeader + plainHeader)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	body := escapeJinja(b.Bytes()[len(jinjaHeader):], j.prefix)
	pairs := make([]string, 0, 4*len(j.used))
	for _, v := range j.used {
		src := jinjaSources[v]
		pairs = append(pairs,
			j.fileToken(v), "{{ "+src+" | string"+yamlDQ+" }}",
			j.shellToken(v), `'{{ `+src+` | string | replace("'", "'\\''")`+yamlDQ+` }}'`)
	}
	return append([]byte(jinjaHeader), strings.NewReplacer(pairs...).Replace(string(body))...), nil
}

func (j *jinjaValues) quote(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, j.prefix) {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		j.quote(c)
	}
}

// escapeJinja makes every "{{", "{%" and "{#" of text print itself under
// jinja: a string expression that yields it. A "{" right before a token is
// escaped too, or with the expression put there it would open one.
func escapeJinja(text []byte, token string) []byte {
	var b bytes.Buffer
	b.Grow(len(text) + 64)
	for i := 0; i < len(text); i++ {
		if text[i] != '{' {
			b.WriteByte(text[i])
			continue
		}
		switch rest := text[i+1:]; {
		case len(rest) > 0 && (rest[0] == '{' || rest[0] == '%' || rest[0] == '#'):
			b.WriteString("{{ '{" + string(rest[0]) + "' }}")
			i++
		case bytes.HasPrefix(rest, []byte(token)):
			b.WriteString("{{ '{' }}")
		default:
			b.WriteByte('{')
		}
	}
	return b.Bytes()
}
