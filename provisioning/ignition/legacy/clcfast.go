package legacy

import (
	"strings"

	ctypes "github.com/flatcar/container-linux-config-transpiler/config/types"
	ign23types "github.com/flatcar/ignition/config/v2_3/types"
)

// The user's additionalConfig is usually a few systemd units and files. For
// those, fastCLC does what the transpiler does (yaml.v3 parse, decode into
// the CLC types, validation, conversion, validation of the Ignition config)
// without yaml.v3's general parser and without the reflective walks' name
// look-ups, and declines every other input, which then goes to the
// transpiler itself. It accepts only what it reads exactly as yaml.v3 and
// the transpiler do, and only when their report would be empty, so its
// answer is always the transpiler's (TestFastCLCMatchesTranspiler and
// FuzzFastCLC compare the two on every input the fast path accepts):
//
//   - block mappings and block sequences of mappings, indented with spaces;
//     a sequence may sit at its key's indentation;
//   - plain scalars of printable ASCII that YAML reads as written (no
//     quotes, comments, anchors, tags, flow collections or continuation
//     lines), bools only as true or false, integers only as decimal or as
//     octal with a leading 0;
//   - literal blocks ("|", clip chomping, no indentation indicator) whose
//     lines are empty or indented deeper than their key, with no
//     whitespace-only lines and no line break other than LF;
//   - whole-line comments and empty lines outside literal blocks;
//   - the keys systemd.units[].{name, enable, enabled, mask, contents,
//     dropins[].{name, contents}} and storage.{files[], directories[]}.
//     {filesystem, path, mode, overwrite, user.{id, name}, group.{id,
//     name}}, files also with append and contents.inline, each at most once.

// fastCLCMaxDepth bounds the parser's nesting: the deepest accepted key,
// systemd.units[].dropins[].name, is at depth 6.
const fastCLCMaxDepth = 8

// fastCLCMaxKeys bounds a mapping's keys, and so the parser's search for
// a repeated one; the widest accepted mapping, a file, has eight.
const fastCLCMaxKeys = 16

// fastCLCMaxBytes bounds what the fast path reads (its parser keeps a
// string header per line): larger configs, rare in user data that must fit
// a cloud's limit anyway, go to the transpiler.
const fastCLCMaxBytes = 64 << 10

// fastCLC returns the transpiled config and ok=true, or ok=false when the
// transpiler must decide.
func fastCLC(data []byte) (ign23types.Config, bool) {
	if len(data) > fastCLCMaxBytes {
		return ign23types.Config{}, false
	}
	doc, ok := parseFastYAML(string(data))
	if !ok {
		return ign23types.Config{}, false
	}
	var in ctypes.Config
	if !decodeFastCLC(doc, &in) || !cleanByWalk(&in) {
		return ign23types.Config{}, false
	}
	out := convertFastCLC(&in)
	if !cleanByWalk(&out) {
		return ign23types.Config{}, false
	}
	return out, true
}

// fnode is a parsed YAML node: a mapping (keys and vals), a sequence
// (items) or a scalar (s; block: a literal block).
type fnode struct {
	kind  byte // 'm', 's' or 'v'
	keys  []string
	vals  []*fnode
	items []*fnode
	s     string
	block bool
}

// fastParser reads lines; after a sequence item's "- " the rest of the
// line is the current line, at the column where it starts.
type fastParser struct {
	lines   []string
	i       int
	virtual bool
	vcol    int
	vtext   string
	depth   int
	ok      bool
}

func parseFastYAML(data string) (*fnode, bool) {
	p := &fastParser{lines: strings.Split(data, "\n"), ok: true}
	col, text, ok := p.peek()
	if !ok || !p.ok || isDash(text) {
		return nil, false
	}
	n := p.mapping(col)
	if !p.ok {
		return nil, false
	}
	if _, _, more := p.peek(); more || !p.ok {
		return nil, false
	}
	return n, true
}

// peek returns the current structural line's column and text, skipping
// empty lines and comments; ok=false at the end.
func (p *fastParser) peek() (col int, text string, ok bool) {
	if p.virtual {
		return p.vcol, p.vtext, true
	}
	for ; p.i < len(p.lines); p.i++ {
		line := p.lines[p.i]
		t := strings.TrimLeft(line, " ")
		if t == "" || t[0] == '#' {
			if !printableASCII(t) {
				p.ok = false
				return 0, "", false
			}
			continue
		}
		if !printableASCII(t) {
			p.ok = false
			return 0, "", false
		}
		return len(line) - len(t), t, true
	}
	return 0, "", false
}

// next moves past the current line (a virtual one is the rest of it).
func (p *fastParser) next() {
	p.virtual = false
	p.i++
}

func isDash(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

// mapping reads a block mapping whose keys are at col.
func (p *fastParser) mapping(col int) *fnode {
	if p.depth++; p.depth > fastCLCMaxDepth {
		p.ok = false
		return nil
	}
	defer func() { p.depth-- }()
	n := &fnode{kind: 'm'}
	for p.ok {
		c, text, ok := p.peek()
		if !ok || c < col {
			break
		}
		if c > col || isDash(text) {
			p.ok = false
			break
		}
		key, rest, ok := splitKey(text)
		if !ok {
			p.ok = false
			break
		}
		if len(n.keys) == fastCLCMaxKeys {
			p.ok = false
			return nil
		}
		for _, k := range n.keys {
			if k == key {
				p.ok = false // yaml.v3 refuses a repeated key
				return nil
			}
		}
		p.next()
		v := p.value(col, rest)
		n.keys, n.vals = append(n.keys, key), append(n.vals, v)
	}
	return n
}

// splitKey splits "key: rest" for a key of lower-case letters and "_".
func splitKey(text string) (key, rest string, ok bool) {
	i := 0
	for i < len(text) && (text[i] >= 'a' && text[i] <= 'z' || text[i] == '_') {
		i++
	}
	if i == 0 || i == len(text) || text[i] != ':' {
		return "", "", false
	}
	rest = text[i+1:]
	if rest != "" && rest[0] != ' ' {
		return "", "", false
	}
	return text[:i], strings.TrimLeft(rest, " "), true
}

// value reads the value of a key at col whose line continues with rest.
func (p *fastParser) value(col int, rest string) *fnode {
	switch {
	case rest == "":
		c, text, ok := p.peek()
		switch {
		case !ok || !p.ok:
			p.ok = false // null
			return nil
		case isDash(text) && c >= col:
			return p.sequence(c)
		case c > col:
			return p.mapping(c)
		}
		p.ok = false
		return nil
	case rest == "|":
		return p.literal(col)
	case !plainSafe(rest):
		p.ok = false
		return nil
	}
	// A more indented line after a plain scalar continues it.
	if c, _, ok := p.peek(); ok && c > col {
		p.ok = false
	}
	return &fnode{kind: 'v', s: rest}
}

// sequence reads a block sequence of mappings whose dashes are at col.
func (p *fastParser) sequence(col int) *fnode {
	if p.depth++; p.depth > fastCLCMaxDepth {
		p.ok = false
		return nil
	}
	defer func() { p.depth-- }()
	n := &fnode{kind: 's'}
	for p.ok {
		c, text, ok := p.peek()
		if !ok || c < col || (c == col && !isDash(text)) {
			break
		}
		if c > col {
			p.ok = false
			break
		}
		item := strings.TrimLeft(text[1:], " ")
		if item == "" || item[0] == '#' || isDash(item) {
			p.ok = false
			break
		}
		p.virtual, p.vcol, p.vtext = true, c+len(text)-len(item), item
		n.items = append(n.items, p.mapping(p.vcol))
		if p.virtual {
			p.ok = false // the item's first line was not a key
		}
	}
	return n
}

// literal reads a literal block whose key is at col.
func (p *fastParser) literal(col int) *fnode {
	var b strings.Builder
	indent, empty, lines := -1, 0, 0
	for ; p.i < len(p.lines); p.i++ {
		line := p.lines[p.i]
		if line == "" {
			empty++
			continue
		}
		t := strings.TrimLeft(line, " ")
		lead := len(line) - len(t)
		if t == "" {
			p.ok = false // whitespace-only lines: YAML's rules for them are subtle
			return nil
		}
		if indent < 0 {
			if lead <= col {
				break
			}
			indent = lead
		}
		if lead < indent {
			break
		}
		if t[0] == '\t' || !safeRunes(line[indent:], true, false) {
			p.ok = false
			return nil
		}
		if p.i == len(p.lines)-1 {
			p.ok = false // no final line break
			return nil
		}
		for ; empty > 0; empty-- {
			b.WriteByte('\n')
		}
		b.WriteString(line[indent:])
		b.WriteByte('\n')
		lines++
	}
	if lines == 0 {
		p.ok = false
		return nil
	}
	return &fnode{kind: 'v', s: b.String(), block: true}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
