package cloudinit

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The scan and the emitter take byte-level fast paths for the common value
// (see plainFine, yamlKind, simpleBlock, quoteASCII). These tests hold each
// fast path to a slower reference it must agree with: PyYAML itself, the
// resolver regexes of PyYAML's yaml/resolver.py, strconv.Quote (CABPK's %q)
// and the definitions the fast paths replaced.

// PyYAML's implicit resolvers (yaml/resolver.py), all of them, in the order
// PyYAML tries them for a value starting with a digit.
var pyyamlResolvers = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"boolean", regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)},
	{"number", regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)},
	{"number", regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)},
	{"merge key", regexp.MustCompile(`^(?:<<)$`)},
	{"null", regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)},
	{"timestamp", regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)},
	{"value key", regexp.MustCompile(`^(?:=)$`)},
}

func regexpKind(s string) string {
	for _, r := range pyyamlResolvers {
		if r.re.MatchString(s) {
			return r.kind
		}
	}
	return "string"
}

// kindCorpus is every string up to length 4 over the characters YAML 1.1's
// resolvers care about, and values that reach deep into each resolver.
func kindCorpus(maxLen int) []string {
	const alphabet = "0179_.:+-eExbafnNiITtZ ~<=y"
	out := []string{"", "0b1010", "0x_1F", "0o17", "-0b1", "+0x1f", "0777", "0778", "09", "00", "-0", "+12_345", "1:20", "190:20:30", "190:20:30.15", "-1:60",
		"1e3", "1.0e+3", "6.8523015e+5", "685.230_15e+03", "-.inf", "+.INF", ".Inf", ".nan", ".NaN", "-.nan", "1.", ".5", "._5", "1_000.0_0",
		"2001-12-14", "2001-1-1", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2001-12-14\t21:59:43Z", "2001-12-15T02:59:43.1Z", "2002-12-14 1:2:3",
		"yes", "No", "ON", "oFF", "TRUE", "False", "null", "Null", "NULL", "nULL", "n", "y", "Y", "~", "<<", "<", "=", "==", "10.244.0.0/16", "-E", "-", "+", "."}
	var grow func(prefix string)
	grow = func(prefix string) {
		if len(prefix) == maxLen {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			s := prefix + alphabet[i:i+1]
			out = append(out, s)
			grow(s)
		}
	}
	grow("")
	return out
}

func TestYAMLKindMatchesResolverRegexps(t *testing.T) {
	values := kindCorpus(4)
	for _, s := range values {
		if got, want := yamlKind(s), regexpKind(s); got != want {
			t.Errorf("yamlKind(%q) = %s, PyYAML's resolvers: %s", s, got, want)
		}
	}
	t.Logf("%d values", len(values))
}

const pyyamlKinds = `
import json, sys
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver
names = {"null": "null", "bool": "boolean", "int": "number", "float": "number", "timestamp": "timestamp", "merge": "merge key", "value": "value key", "str": "string"}
r = Resolver()
json.dump([names[r.resolve(ScalarNode, s, (True, False)).rsplit(":", 1)[1]] for s in json.load(sys.stdin)], sys.stdout)
`

// TestYAMLKindMatchesPyYAML asks PyYAML's own resolver, the one cloud-init's
// safe loader uses, for the type of every value in the corpus.
func TestYAMLKindMatchesPyYAML(t *testing.T) {
	values := kindCorpus(3)
	out := pyyaml(t, pyyamlKinds, values)
	var want []string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(values) {
		t.Fatalf("PyYAML answered %d kinds for %d values: %v", len(want), len(values), err)
	}
	bad := 0
	for i, s := range values {
		if got := yamlKind(s); got != want[i] {
			if bad++; bad <= 50 {
				t.Errorf("yamlKind(%q) = %s, PyYAML: %s", s, got, want[i])
			}
		}
	}
	t.Logf("%d values typed as PyYAML types them", len(values))
}

// oldPlainSafe is plainSafe as first written, with the strings package.
func oldPlainSafe(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	if strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`") {
		return false
	}
	return !strings.Contains(s, ": ") && !strings.Contains(s, " #") && !strings.HasSuffix(s, ":") && !strings.ContainsAny(s, "\n\r\t")
}

// plainCorpus mixes YAML indicators, blanks, comments, quotes, braces,
// control bytes, non-ASCII and YAML 1.1 types.
func plainCorpus() []string {
	out := corpus()
	const alphabet = "a0-?: #{}'\"\t\n\x01\x7f\xc2\x85é!|>=~"
	var grow func(prefix string)
	grow = func(prefix string) {
		if len(prefix) == 3 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			s := prefix + alphabet[i:i+1]
			out = append(out, s)
			grow(s)
		}
	}
	grow("")
	return append(out, "-E", "--v=5", "/dev/sdb1", "lazy_itable_init=1,lazy_journal_init=1", "ALL=(ALL) NOPASSWD:ALL", "ssh-ed25519 AAAA x@y", "a:b:c", "key= value #x", "{{ ds.meta_data.x }}")
}

// TestPlainFastPathsAgree: plainFine never passes a value that the full
// reading (held to PyYAML by TestPlainReadingMatchesPyYAML) or the jinja
// check would warn about, and the byte-level helpers agree with the
// definitions they replaced.
func TestPlainFastPathsAgree(t *testing.T) {
	values := plainCorpus()
	for _, v := range values {
		if plainFine(v) {
			r, _ := plainReading(v, false)
			k, _ := plainReading(v, true)
			if r != readsSame || k != readsSame || jinjaHazard(v) != "" {
				t.Errorf("plainFine(%q) but it reads %d as a value, %d as a key, jinja %q", v, r, k, jinjaHazard(v))
			}
		}
		if got, want := plainSafe(v), oldPlainSafe(v); got != want {
			t.Errorf("plainSafe(%q) = %v, want %v", v, got, want)
		}
		if got, want := hasLineBreak(v), strings.ContainsAny(v, "\n\r\u0085\u2028\u2029"); got != want {
			t.Errorf("hasLineBreak(%q) = %v, want %v", v, got, want)
		}
		if quotableASCII(v) && !(printable(v) && !hasLineBreak(v) && !strings.Contains(v, "'") && jinjaHazard(v) == "") {
			t.Errorf("quotableASCII(%q) passes a value single quotes do not carry", v)
		}
	}
	for _, v := range []string{"\u2028", "a\u2029", "\u2027", "\xe2\x80", "\xc2", "\u0085x"} {
		if got, want := hasLineBreak(v), strings.ContainsAny(v, "\n\r\u0085\u2028\u2029"); got != want {
			t.Errorf("hasLineBreak(%q) = %v, want %v", v, got, want)
		}
	}
	t.Logf("%d values", len(values))
}

// TestSimpleBlockWordAtATime: the eight-bytes-at-a-time loop agrees with
// a byte-by-byte one for every byte value at every position of a word, in
// the words and in the bytes after the last whole word, and finds '{'.
func TestSimpleBlockWordAtATime(t *testing.T) {
	byteByByte := func(s string) bool {
		i := 0
		for i < len(s) && s[i] == '\n' {
			i++
		}
		if i < len(s) && s[i] == ' ' {
			return false
		}
		for ; i < len(s); i++ {
			if !blockByte[s[i]] {
				return false
			}
		}
		return true
	}
	base := []byte(strings.Repeat("MIIBXDCCAQGgAwIBAgIBATAKBggqhkjOPQQDAjAV\n", 3) + "tail")
	for _, pos := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, len(base) - 2, len(base) - 1} {
		for c := 0; c < 256; c++ {
			b := append([]byte(nil), base...)
			b[pos] = byte(c)
			s := string(b)
			if got, want := simpleBlock(s), byteByByte(s); got != want {
				t.Fatalf("simpleBlock with byte %#x at %d = %v, byte by byte %v", c, pos, got, want)
			}
			if simple, braces := scanBlock(s); simple && braces != strings.Contains(s, "{") {
				t.Fatalf("scanBlock with byte %#x at %d: braces = %v", c, pos, braces)
			}
		}
	}
}

// TestQuoteASCIIIsGoQuote: the emitter's fast quoting of commands writes
// exactly what strconv.Quote (CABPK's %q) writes, and leaves everything
// else to it.
func TestQuoteASCIIIsGoQuote(t *testing.T) {
	for _, c := range append(plainCorpus(), "if [ -f /etc/x ]; then\n\techo \"a\\b\"\nfi\n", "echo \x00", "é", "\x7f", "\r") {
		e := &emitter{}
		if e.quoteASCII(c) {
			if got, want := string(e.buf), strconv.Quote(c); got != want {
				t.Errorf("quoteASCII(%q) wrote %s, strconv.Quote %s", c, got, want)
			}
		} else if len(e.buf) != 0 {
			t.Errorf("quoteASCII(%q) refused but wrote %q", c, e.buf)
		}
	}
}

// TestPlainFineWordAtATime: plainFine's eight-bytes-at-a-time skip agrees
// with the byte loop alone for every byte value at every position of a
// value long enough to have whole words, next to each byte that changes
// what a blank, '#' or ':' means.
func TestPlainFineWordAtATime(t *testing.T) {
	byteByByte := func(v string) bool {
		n := len(v)
		switch c := v[0]; {
		case c == '-' || c == '?' || c == ':':
			if n == 1 || v[1] == ' ' {
				return false
			}
		case c == ' ' || plainIndicator[c]:
			return false
		}
		if last := v[n-1]; last == ' ' || last == ':' {
			return false
		}
		for i := 0; i < n; i++ {
			switch c := v[i]; {
			case plainByte[c], c == ':':
			case c == ' ':
				if v[i-1] == ':' {
					return false
				}
			case c == '#':
				if v[i-1] == ' ' {
					return false
				}
			default:
				return false
			}
		}
		return yamlKind(v) == "string"
	}
	for _, base := range []string{"/etc/kubernetes/pki/ca.crt", "ALL=(ALL) NOPASSWD:ALL", "a:b#c d:e f#g h:i j", "ssh-ed25519 AAAAC3Nz x@y"} {
		for pos := 1; pos < len(base)-1; pos++ {
			for c := 0; c < 256; c++ {
				b := []byte(base)
				b[pos] = byte(c)
				v := string(b)
				if got, want := plainFine(v), byteByByte(v); got != want {
					t.Fatalf("plainFine(%q) = %v, byte by byte %v", v, got, want)
				}
			}
		}
	}
}

// TestIndent6: content lines are written as the layout says (six spaces
// before every line, the last and possibly empty one included), whether
// the buffer has room already or must grow on the way.
func TestIndent6(t *testing.T) {
	long := strings.Repeat("MIIBXDCCAQGgAwIBAgIBATAKBggqhkjOPQQDAjAV", 40)
	for _, s := range []string{"", "\n", "\n\n", "a", "a\n", "a\nb", "a\nb\n", long, long + "\n" + long + "\n", "\n" + long} {
		want := "x      " + strings.ReplaceAll(s, "\n", "\n      ")
		for _, room := range []int{0, 1, len(want), len(want) + 64} {
			e := &emitter{buf: append(make(doc, 0, 1+room), 'x')}
			e.indent6(s)
			if got := string(e.buf); got != want {
				t.Errorf("indent6(%q) with room %d = %q, want %q", s, room, got, want)
			}
		}
	}
}
