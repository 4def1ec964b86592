package cloudinit

import (
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// yaml.v3 writes the plain dialect, PyYAML reads it on the node (cloud-init),
// and a few strings come out of the first as something else in the second:
// "=" and "<<" written plain are PyYAML's value and merge tags, which
// safe_load refuses, so cloud-init drops the whole document; text of several
// lines that starts with a line break (or is only line breaks) is a literal
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
	if s == "=" || s == "<<" {
		return true
	}
	// yaml.v3 writes text that is not UTF-8 as !!binary, whatever its
	// start (and cannot write it as a string).
	return strings.IndexByte(s, '\n') >= 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\n') && utf8.ValidString(s)
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
