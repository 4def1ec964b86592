package provisioning

import (
	"regexp"
	"strings"
)

// NodeValue is a value only the node knows, at its first boot, from its
// instance metadata: what a provider cannot write into a Plan because the
// Plan is rendered before the machine exists.
//
// A Plan uses them through Text (File.Template, Command.Template), never
// through template syntax in a string: every literal byte of a Plan is data
// in every format, so a "{{ }}" in a file stays "{{ }}", and a value is only
// ever one the Plan asked for by its type.
type NodeValue string

const (
	// NodeName is the node's host name as the instance metadata gives it
	// (cloud-init's local-hostname).
	NodeName NodeValue = "nodeName"
	// NodeLocalIPv4 is the node's private IPv4 address as the instance
	// metadata gives it (EC2's local-ipv4).
	NodeLocalIPv4 NodeValue = "localIPv4"
	// NodeInstanceID is the instance's ID in its cloud.
	NodeInstanceID NodeValue = "instanceID"
)

// NodeValues lists every NodeValue.
var NodeValues = []NodeValue{NodeName, NodeLocalIPv4, NodeInstanceID}

// Env is the environment variable a command reads the value from:
// NODEBOOT_NODE_NAME, NODEBOOT_LOCAL_IPV4 or NODEBOOT_INSTANCE_ID.
// Provisioners that support NodeValues set it for every command of a Plan
// whose commands use the value; a Command.Template refers to it for the
// provider, so providers need not spell it.
func (v NodeValue) Env() string {
	switch v {
	case NodeName:
		return "NODEBOOT_NODE_NAME"
	case NodeLocalIPv4:
		return "NODEBOOT_LOCAL_IPV4"
	case NodeInstanceID:
		return "NODEBOOT_INSTANCE_ID"
	}
	return ""
}

func (v NodeValue) known() bool { return v.Env() != "" }

// Text is content with NodeValues in it: literal parts, written as they
// are, and value parts, each filled in on the node at first boot. Build it
// with Literal and Value:
//
//	provisioning.Text{provisioning.Literal("node-name: "), provisioning.Value(provisioning.NodeName), provisioning.Literal("\n")}
type Text []TextPart

// TextPart is one part of a Text: a Literal or a Value, never both.
type TextPart struct {
	// Literal is text written exactly as it is, in every format.
	Literal string
	// Value, when set, is filled in with the node's value; Literal must
	// then be empty.
	Value NodeValue
}

// Literal is a TextPart written as it is.
func Literal(s string) TextPart { return TextPart{Literal: s} }

// Value is a TextPart filled in with the node's value v.
func Value(v NodeValue) TextPart { return TextPart{Value: v} }

// Expand is the Text with each value part replaced by value(v): what
// renderers use to put their own mechanism (a jinja expression, a shell
// parameter expansion) where the values go.
func (t Text) Expand(value func(NodeValue) string) string {
	var b strings.Builder
	for _, part := range t {
		if part.Value != "" {
			b.WriteString(value(part.Value))
		} else {
			b.WriteString(part.Literal)
		}
	}
	return b.String()
}

// Values lists the distinct NodeValues t uses, in NodeValues' order.
func (t Text) Values() []NodeValue {
	var out []NodeValue
	for _, v := range NodeValues {
		for _, part := range t {
			if part.Value == v {
				out = append(out, v)
				break
			}
		}
	}
	return out
}

// ShellValue is how a Command.Template's value part reads in the command's
// script: a double-quoted parameter expansion ("${NODEBOOT_NODE_NAME}"),
// one word wherever it stands outside single quotes, never code.
func ShellValue(v NodeValue) string { return `"${` + v.Env() + `}"` }

// UsesNodeValues reports whether any file or command of p has a Template.
func (p *Plan) UsesNodeValues() bool {
	if p == nil {
		return false
	}
	for i := range p.Files {
		if len(p.Files[i].Template) > 0 {
			return true
		}
	}
	for i := range p.Commands {
		if len(p.Commands[i].Template) > 0 {
			return true
		}
	}
	return false
}

// NodeValuesUsed lists the distinct NodeValues p's templates use, in
// NodeValues' order.
func (p *Plan) NodeValuesUsed() []NodeValue {
	var all Text
	for i := range p.Files {
		all = append(all, p.Files[i].Template...)
	}
	for i := range p.Commands {
		all = append(all, p.Commands[i].Template...)
	}
	return all.Values()
}

// WithCommandTemplates returns p with every Command.Template expanded into
// Script with ShellValue, so a provisioner that sets the values' Env for
// its commands renders them like any command. p itself is not changed; a
// Plan without command templates is returned as it is.
func (p *Plan) WithCommandTemplates() *Plan {
	has := false
	for i := range p.Commands {
		has = has || len(p.Commands[i].Template) > 0
	}
	if !has {
		return p
	}
	cp := *p
	cp.Commands = append([]Command(nil), p.Commands...)
	for i := range cp.Commands {
		if c := &cp.Commands[i]; len(c.Template) > 0 {
			c.Script, c.Template = c.Template.Expand(ShellValue), nil
		}
	}
	return &cp
}

// RefuseNodeValues adds, for a provisioner (or dialect) with no way to
// read instance metadata at first boot, an ErrUnsupported problem at each
// file's and command's template. A provisioner written before templates
// existed would render such a file empty and such a command as an empty
// script, and Capabilities would not know: every provisioner's Check must
// either implement templates or call this (and RefuseUserData).
func RefuseNodeValues(ps *Problems, p *Plan, provisioner string) {
	if p == nil {
		return
	}
	for i := range p.Files {
		if len(p.Files[i].Template) > 0 {
			Unsupported(ps, provisioner, FieldPath(p.Files[i].Origin, index("files", i), "template"), "a file with per-node values (File.Template)")
		}
	}
	for i := range p.Commands {
		if len(p.Commands[i].Template) > 0 {
			Unsupported(ps, provisioner, FieldPath(p.Commands[i].Origin, index("commands", i), "template"), "a command with per-node values (Command.Template)")
		}
	}
}

// validateTemplates: a template replaces Content or Script, its parts are
// one thing each, and each value is one this package knows.
func validateTemplates(ps *Problems, p *Plan) {
	for i := range p.Files {
		f := &p.Files[i]
		if len(f.Template) == 0 {
			continue
		}
		at := FieldPath(f.Origin, index("files", i), "template")
		if f.Content != "" {
			ps.Errorf(at, "must not be set together with content: the template is the file's content")
		}
		if f.Encoding != EncodingNone {
			ps.Errorf(FieldPath(f.Origin, index("files", i), "encoding"), "must be empty for a file with a template: the template is text")
		}
		validateText(ps, f.Template, at)
	}
	for i := range p.Commands {
		c := &p.Commands[i]
		if len(c.Template) == 0 {
			continue
		}
		at := FieldPath(c.Origin, index("commands", i), "template")
		if c.Script != "" {
			ps.Errorf(at, "must not be set together with script: the template is the command's script")
		}
		validateText(ps, c.Template, at)
	}
}

func validateText(ps *Problems, t Text, at Path) {
	for j, part := range t {
		switch {
		case part.Value != "" && part.Literal != "":
			ps.Errorf(at.Index(j), "must be a literal or a value, not both")
		case part.Value != "" && !part.Value.known():
			ps.Errorf(at.Index(j).Field("value"), "unknown node value (want nodeName, localIPv4 or instanceID)")
		}
	}
}

// instanceDataJinja finds a cloud-init jinja reference to instance data
// ("{{ ds.meta_data.local_hostname }}", "{{ v1.instance_id }}"), the way
// CABPK's users ask for per-node values.
var instanceDataJinja = regexp.MustCompile(`\{\{-?\s*(ds|v1|v2|instance_data|merged_cfg)\.`)

// RefuseLiteralJinja is for the native provisioners, which write every
// literal byte as it is: a File.Content or Command.Script that refers to
// cloud-init's instance data the way CABPK's jinja does would reach the
// node as that text, never as the value, so it is an error (a hazard) at
// the field, pointing at Template. Other "{{ }}" (a Helm chart's, a
// "{{ not-a-template }}") is data and passes; content meant literally
// can be given base64-encoded, which is not read.
func RefuseLiteralJinja(ps *Problems, p *Plan, provisioner string) {
	literalJinja(ps, p, provisioner, ps.Hazardf)
}

// WarnLiteralJinja is RefuseLiteralJinja as warnings, for a native dialect
// that also renders Plans built from KubeadmConfigs written for CABPK's
// jinja (Ignition v3 by opt-in), which it must keep rendering.
func WarnLiteralJinja(ps *Problems, p *Plan, provisioner string) {
	literalJinja(ps, p, provisioner, ps.Warnf)
}

func literalJinja(ps *Problems, p *Plan, provisioner string, report func(Path, string, ...any)) {
	if p == nil {
		return
	}
	for i := range p.Files {
		f := &p.Files[i]
		if f.Encoding == EncodingNone && strings.Contains(f.Content, "{{") && instanceDataJinja.MatchString(f.Content) {
			report(FieldPath(f.Origin, index("files", i), "content"), "refers to cloud-init instance data with jinja, which the %s provisioner writes as it is, never as the value: use Template with a provisioning.Value for a per-node value", provisioner)
		}
	}
	for i := range p.Commands {
		c := &p.Commands[i]
		if strings.Contains(c.Script, "{{") && instanceDataJinja.MatchString(c.Script) {
			report(FieldPath(c.Origin, index("commands", i), "script"), "refers to cloud-init instance data with jinja, which the %s provisioner runs as it is, never as the value: use Template with a provisioning.Value for a per-node value", provisioner)
		}
	}
}
