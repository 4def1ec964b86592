package cloudinit

import (
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// yaml.v3 writes the plain dialect, PyYAML reads it on the node (cloud-init),
// and a few strings come out of the first as something else in the second:
// "=" and "<<" written plain are PyYAML's value and merge tags, which
// safe_load refuses, so cloud-init drops the whole document, and so is an
// impossible date ("2024-02-30"); a timestamp yaml.v3's time.Parse does not
// take ("2001-12-14 21:59:43 Z") reads as a date; text of several lines that
// starts with a line break (LF, or PyYAML's NEL, LS and PS; or is only line
// breaks) is a literal
// block PyYAML reads with fewer line breaks; text of several lines that
// starts with a blank needs an indentation indicator that yaml.v3's own
// reader, which Node.Encode runs for the jinja template, gets wrong. These
// strings are written double-quoted, where every byte is an escape both read
// alike. Every string of the document is a plainText or in plainLines, which
// pick that style as they are marshalled: the jinja template's yaml.Node is
// yaml.v3's own reading of its text, which already lost a literal block's
// blanks and takes a plain "<<" for its merge key.

// misreadUnquoted reports whether s must be double-quoted for PyYAML.
func misreadUnquoted(s string) bool {
	// yaml.v3 writes text that is not UTF-8 as !!binary, whatever its
	// start (and cannot write it as a string).
	if !utf8.ValidString(s) {
		return false
	}
	if !strings.ContainsAny(s, "\n\r\u0085\u2028\u2029") {
		// yaml.v3 quotes what YAML 1.2 and its own resolver read as
		// another type; PyYAML's YAML 1.1 resolvers also take "=", "<<"
		// and timestamps yaml.v3's time.Parse refuses ("2024-02-30",
		// "2001-12-14 21:59:43 Z"), and an impossible date fails safe_load.
		return yamlKind(s) != "string"
	}
	r, _ := utf8.DecodeRuneInString(s)
	return r == ' ' || r == '\t' || r == '\n' || r == '\u2028' || r == '\u2029' || r == '\u0085'
}

// doubleQuotedNode is s as a double-quoted string node.
func doubleQuotedNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: s}
}

// plainText is a string that may span lines: file content.
type plainText string

// MarshalYAML implements yaml.Marshaler.
func (s plainText) MarshalYAML() (any, error) {
	if misreadUnquoted(string(s)) {
		return doubleQuotedNode(string(s)), nil
	}
	return string(s), nil
}

// plainLines is a list of strings that may span lines: commands, keys.
type plainLines []string

// MarshalYAML implements yaml.Marshaler.
func (l plainLines) MarshalYAML() (any, error) {
	var out []any
	for i, s := range l {
		if !misreadUnquoted(s) {
			if out != nil {
				out = append(out, s)
			}
			continue
		}
		if out == nil {
			out = make([]any, i, len(l))
			for j := range i {
				out[j] = l[j]
			}
		}
		out = append(out, doubleQuotedNode(s))
	}
	if out == nil {
		return []string(l), nil
	}
	return out, nil
}
