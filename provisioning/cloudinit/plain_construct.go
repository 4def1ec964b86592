package cloudinit

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// yaml.v3 reads a user's cloud-config part into nodes without building a
// value, and PyYAML's safe_load, which cloud-init keeps the part with,
// fails on some of them only as it builds them: a tag it has no
// constructor for, a value that does not fit its tag (!!int abc), an
// impossible date, a plain "=" or "<<" as a value, a list or mapping as a
// key, a merge key whose value is no mapping. constructProblem follows
// SafeConstructor (yaml/constructor.py) for those. Its answers name the
// construct and its line, never the text: the part may hold a password.

// constructProblem names the first node of n safe_load cannot build, or "".
func constructProblem(n *yaml.Node) string {
	if n.Kind == yaml.AliasNode {
		// The anchored node was checked where it stands.
		return ""
	}
	if msg := tagProblem(n); msg != "" {
		return fmt.Sprintf("line %d: %s", n.Line, msg)
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch {
			case isMergeKey(k):
				if !mergeable(v) {
					return fmt.Sprintf("line %d: a merge key ('<<') whose value is not a mapping or a list of mappings", k.Line)
				}
			case k.Kind == yaml.ScalarNode && k.Style&(yaml.TaggedStyle|yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 && yamlKind(k.Value) == "value key":
				// PyYAML reads a plain "=" key as the string "=".
			default:
				if kind := resolved(k).Kind; kind == yaml.SequenceNode || kind == yaml.MappingNode {
					return fmt.Sprintf("line %d: a list or mapping as a key, which PyYAML cannot use as one", k.Line)
				}
				if msg := constructProblem(k); msg != "" {
					return msg
				}
			}
			if msg := constructProblem(v); msg != "" {
				return msg
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if msg := constructProblem(c); msg != "" {
				return msg
			}
		}
	case yaml.ScalarNode:
		if n.Style&(yaml.TaggedStyle|yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
			if msg := implicitProblem(n.Value); msg != "" {
				return fmt.Sprintf("line %d: %s", n.Line, msg)
			}
		}
	}
	return ""
}

// resolved is n, or the node an alias n names.
func resolved(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// isMergeKey: a plain "<<" or a key tagged !!merge.
func isMergeKey(k *yaml.Node) bool {
	if k.Kind != yaml.ScalarNode {
		return false
	}
	if k.Style&yaml.TaggedStyle != 0 {
		return k.Tag == "!!merge"
	}
	return k.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 && k.Value == "<<"
}

// mergeable: a mapping, or a list of mappings (flatten_mapping). What they
// hold is checked where they stand (an alias may name an ancestor).
func mergeable(v *yaml.Node) bool {
	switch v = resolved(v); v.Kind {
	case yaml.MappingNode:
		return true
	case yaml.SequenceNode:
		for _, c := range v.Content {
			if resolved(c).Kind != yaml.MappingNode {
				return false
			}
		}
		return true
	}
	return false
}

// scalarTags are the safe tags of scalars; collectionTags those of a
// mapping or a list.
var (
	scalarTags     = map[string]bool{"!!str": true, "!!int": true, "!!float": true, "!!bool": true, "!!null": true, "!!timestamp": true, "!!binary": true}
	collectionTags = map[string]yaml.Kind{"!!map": yaml.MappingNode, "!!set": yaml.MappingNode, "!!seq": yaml.SequenceNode, "!!omap": yaml.SequenceNode, "!!pairs": yaml.SequenceNode}
)

// tagProblem says why an explicitly tagged node does not build, or "".
func tagProblem(n *yaml.Node) string {
	if n.Style&yaml.TaggedStyle == 0 || n.Tag == "!" {
		// "!" is the non-specific tag: the node's own kind.
		return ""
	}
	if kind, ok := collectionTags[n.Tag]; ok {
		if n.Kind != kind {
			return "a collection tag on a node of another kind"
		}
		return ""
	}
	if !scalarTags[n.Tag] {
		return "a tag cloud-init's YAML reader (safe_load) has no constructor for"
	}
	if n.Kind != yaml.ScalarNode {
		return "a scalar tag on a list or mapping"
	}
	ok := true
	switch v := n.Value; n.Tag {
	case "!!int":
		ok = pyInt(v)
	case "!!float":
		ok = pyFloat(v)
	case "!!bool":
		switch strings.ToLower(v) {
		case "yes", "no", "true", "false", "on", "off":
		default:
			ok = false
		}
	case "!!timestamp":
		ok = pyTimestamp(v)
	case "!!binary":
		ok = pyBase64(v)
	}
	if !ok {
		return "a value its tag (" + n.Tag + ") cannot take"
	}
	return ""
}

// implicitProblem says why the plain scalar s, typed by PyYAML's
// implicit resolvers, does not build, or "".
func implicitProblem(s string) string {
	switch yamlKind(s) {
	case "value key":
		return "a plain '=' as a value, which PyYAML reads as its value tag"
	case "merge key":
		return "a plain '<<' that is no mapping key, which PyYAML reads as its merge tag"
	case "timestamp":
		if !pyTimestamp(s) {
			return "a date or time that does not exist"
		}
	case "number":
		if yaml11Int.MatchString(s) && !pyInt(s) {
			return "a number PyYAML cannot build"
		}
	}
	return ""
}

// pyInt is construct_yaml_int: underscores dropped, a sign, then 0,
// 0b..., 0x..., 0... (octal), sexagesimal a:b, or Python's int().
func pyInt(v string) bool {
	v = strings.ReplaceAll(v, "_", "")
	if v != "" && (v[0] == '-' || v[0] == '+') {
		v = v[1:]
	}
	var err error
	switch {
	case v == "0":
		return true
	case strings.HasPrefix(v, "0b"):
		_, err = strconv.ParseUint(v[2:], 2, 64)
	case strings.HasPrefix(v, "0x"):
		_, err = strconv.ParseUint(v[2:], 16, 64)
	case strings.HasPrefix(v, "0"):
		_, err = strconv.ParseUint(v, 8, 64)
	case strings.Contains(v, ":"):
		for _, d := range strings.Split(v, ":") {
			if _, err = strconv.ParseUint(d, 10, 64); err != nil {
				break
			}
		}
	default:
		// Python's int() takes surrounding blanks.
		_, err = strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	}
	// Python's integers have no bound: only a syntax error fails.
	return err == nil || isRangeErr(err)
}

// pyFloat is construct_yaml_float: underscores dropped, lower case, .inf
// and .nan, sexagesimal, or Python's float().
func pyFloat(v string) bool {
	v = strings.ToLower(strings.ReplaceAll(v, "_", ""))
	if v != "" && (v[0] == '-' || v[0] == '+') {
		v = v[1:]
	}
	switch {
	case v == ".inf", v == ".nan":
		return true
	case strings.Contains(v, ":"):
		for _, d := range strings.Split(v, ":") {
			if _, err := strconv.ParseFloat(d, 64); err != nil && !isRangeErr(err) {
				return false
			}
		}
		return true
	}
	switch strings.TrimSpace(v) {
	case "inf", "infinity", "nan":
		return true
	case "":
		return false
	}
	_, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return err == nil || isRangeErr(err)
}

func isRangeErr(err error) bool {
	return errors.Is(err, strconv.ErrRange)
}

// pyTimestamp is construct_yaml_timestamp: the resolver's pattern, then
// a date (year 1 to 9999) and time Python's datetime accepts.
func pyTimestamp(v string) bool {
	m := pyTimestampParts.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	year, month, day := num(m[1]), num(m[2]), num(m[3])
	if year < 1 || month < 1 || month > 12 || day < 1 || day > time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return false
	}
	if m[4] == "" {
		return true
	}
	// datetime.timezone takes an offset of less than a day.
	return num(m[4]) < 24 && num(m[5]) < 60 && num(m[6]) < 60 && num(m[7])*60+num(m[8]) < 24*60
}

// pyTimestampParts is the constructor's timestamp_regexp: year, month,
// day, hour, minute, second, and the offset's hours and minutes.
var pyTimestampParts = regexp.MustCompile(`^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)(?:(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+]([0-9][0-9]?)(?::([0-9][0-9]))?))?)?$`)

// pyBase64 is base64.decodebytes (binascii.a2b_base64, not strict): ASCII
// only, characters outside the alphabet skipped, and the data characters
// before the first pad a whole number of quanta or padded to one.
func pyBase64(v string) bool {
	data, pads := 0, 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 0x80:
			return false
		case c == '=':
			if data%4 >= 2 {
				pads++
				if data%4+pads == 4 {
					return true
				}
			}
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
			if pads > 0 {
				// Python ends at a complete quantum only.
				pads = 0
			}
			data++
		}
	}
	return data%4 == 0
}
