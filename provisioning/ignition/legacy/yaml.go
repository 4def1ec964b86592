package legacy

import (
	"encoding/base64"
	"github.com/nodeboot/nodeboot/provisioning"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	yaml "gopkg.in/yaml.v3"
)

// CABPK places Plan values into a Container Linux Config template and parses
// the result with yaml.v3, so the transpiler sees what that parser reads, not
// what the user wrote. The legacy dialect reads its typed values the same way,
// with the readings written down here once:
//
//   - A plain value (a yamlSlot: "gecos: VALUE", a sequence item "- VALUE",
//     "mode: VALUE"): quotes are removed, " #..." is a comment, "~"/"null"/""
//     are null (a null sequence item is dropped), "&a"/"!!tag" prefixes
//     vanish, a trailing line break ends the value, a leading tab breaks it.
//   - A literal block (a clcBlock: "inline: |" with its lines at the
//     template's indentation, a value's later lines re-indented only where
//     the template applies Indent, and then only after LF): CR, NEL, LS and
//     PS are line breaks too, so a line they start is not indented and ends
//     the block; trailing empty lines are clipped to one final newline; when
//     the first line is indented further the whole block loses that extra
//     indentation.
//   - A file mode ("mode: 0644") is decoded into an int: a leading 0 makes
//     it octal, without one it is decimal ("644" is mode 01204), "1e3" is
//     1000 and "3.14" is 3.
//
// Each reading has a fast path for ordinary values, which YAML reads back as
// written. Anything else is read by yaml.v3 itself, from a small document
// that places the value exactly as CABPK's template does: the same
// indentation and the same structure around it. That document is parsed
// twice, with the value and with a placeholder; when the value changes the
// structure (it ends the block or the document, or adds keys or items), or
// the parser or the decoder rejects it, the value cannot be carried and that
// is an error naming the field. Problems never quote a value: values can be
// passwords or Secret content.

// literalIndent is the column at which CABPK's template places file contents.
const literalIndent = 10

// placeholder stands for a value in the shape of its document: a plain
// scalar found nowhere in CABPK's template.
const placeholder = "nodeboot-placeholder"

// A yamlSlot is where CABPK's template writes a plain value: the template
// text before and after it.
type yamlSlot struct {
	before, after string
	// item: a sequence item, decoded as CABPK's []string decodes it.
	item  bool
	shape func() *yaml.Node
}

func newSlot(before, after string, item bool) *yamlSlot {
	s := &yamlSlot{before: before, after: after, item: item}
	s.shape = sync.OnceValue(func() *yaml.Node {
		n, err := parseYAML(before + placeholder + after)
		if err != nil {
			panic("ignition: slot shape does not parse: " + err.Error())
		}
		return n
	})
	return s
}

// The slots of CABPK's template. The text after a value is the next key or
// item at the template's indentation, so that a value can neither continue
// nor end the structure unnoticed.
var (
	slotUserName  = newSlot("passwd:\n  users:\n    - name: ", "\n      gecos: x\n", false)
	slotUserField = newSlot("passwd:\n  users:\n    - name: x\n      gecos: ", "\n      shell: x\n", false)
	slotUserItem  = newSlot("passwd:\n  users:\n    - name: x\n      groups:\n        - ", "\n        - x\n      shell: x\n", true)
	slotFilePath  = newSlot("storage:\n  files:\n    - path: ", "\n      mode: 0\n", false)
	slotFileOwner = newSlot("storage:\n  files:\n    - path: /x\n      user:\n        name: ", "\n      # Owner\n      mode: 0\n", false)
	slotFileMode  = newSlot("storage:\n  files:\n    - path: /x\n      # Owner\n      mode: ", "\n      contents:\n        inline: |\n          x\n", false)
	slotUnitName  = newSlot("systemd:\n  units:\n    - name: ", "\n      enabled: true\n", false)
	slotDisk      = newSlot("storage:\n  disks:\n    - device: ", "\n      wipe_table: true\n", false)
	slotFSName    = newSlot("storage:\n  filesystems:\n    - name: ", "\n      mount:\n        device: x\n", false)
	slotFSMount   = newSlot("storage:\n  filesystems:\n    - name: x\n      mount:\n        device: ", "\n        format: x\n", false)
	slotFSOption  = newSlot("storage:\n  filesystems:\n    - name: x\n      mount:\n        options:\n          - ", "\n          - x\n    - name: x\n", true)
)

// read returns what YAML reads from v in the slot: the string, whether it is
// null (a null item is dropped), and ok=false when CABPK cannot carry it.
func (s *yamlSlot) read(v string) (read string, null, ok bool) {
	if plainSafe(v) {
		return v, false, true
	}
	if v == "" {
		return "", true, true
	}
	return s.parse(v)
}

// parse is read's slow path: yaml.v3 reads v as CABPK writes it.
func (s *yamlSlot) parse(v string) (read string, null, ok bool) {
	n, ok := readPlaced(s.before+v+s.after, s.shape())
	if !ok {
		return "", false, false
	}
	if s.item {
		var items []string
		if (&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{n}}).Decode(&items) != nil {
			return "", false, false
		}
		if len(items) == 0 {
			return "", true, true
		}
		return items[0], false, true
	}
	var out *string
	if n.Decode(&out) != nil {
		return "", false, false
	}
	if out == nil {
		return "", true, true
	}
	return *out, false, true
}

// plainSafe is the fast path of yamlSlot.read: strings YAML reads back as
// themselves wherever the template writes them.
func plainSafe(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' || s[len(s)-1] == ':' {
		return false
	}
	switch {
	case s[0] == '-' && len(s) > 1 && s[1] != ' ' && s[1] != '\t' && s[1] != '-':
		// "-E" is plain: "-" is an indicator only before a blank.
	case strings.IndexByte("-?:,[]{}#&*!|>'\"%@`\t", s[0]) >= 0:
		return false
	}
	switch s {
	case "~", "null", "Null", "NULL":
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		} else if c >= utf8.RuneSelf {
			if !safeRunes(s[i:], false, false) {
				return false
			}
			break
		}
	}
	return !strings.Contains(s, ": ") && !strings.Contains(s, " #")
}

// safeRunes reports whether s holds only characters YAML reads as
// themselves: printable ones, and tab and LF where tab and lf allow them.
func safeRunes(s string, tab, lf bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && !(c == '\t' && tab) && !(c == '\n' && lf)) || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r <= 0x9f, r == 0x2028, r == 0x2029, r == 0xfeff, r == 0xfffe, r == 0xffff:
			// Invalid UTF-8, C1 controls and NEL, line and paragraph
			// separators, the byte order mark, non-characters: the parser
			// refuses them, breaks lines at them or skips them.
			return false
		}
		i += size
	}
	return true
}

// blockSafe reports whether s, placed in a literal block, stays on its lines
// and reads back as written (lf: the template re-indents its LF line breaks).
func blockSafe(s string, lf bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f, c == '\t':
		case c == '\n' && lf:
		case c >= utf8.RuneSelf:
			return safeRunes(s[i:], true, lf)
		default:
			return false
		}
	}
	return true
}

// yamlMode returns the file mode YAML reads from "mode: PERMISSIONS" (nil:
// null), whether that is the octal mode the author meant, and ok=false when
// YAML reads no integer there.
func yamlMode(perm string) (mode *int, asMeant, ok bool) {
	if octalDigits(perm) || (perm != "" && perm[0] != '0' && len(perm) < 10 && strings.Trim(perm, "0123456789") == "") {
		v, err := strconv.ParseInt(perm, 0, 64)
		if err == nil {
			m := int(v)
			return &m, perm[0] == '0', true
		}
	}
	return parseMode(perm)
}

// parseMode is yamlMode's slow path: yaml.v3 reads the mode as CABPK writes
// it.
func parseMode(perm string) (mode *int, asMeant, ok bool) {
	n, ok := readPlaced(slotFileMode.before+perm+slotFileMode.after, slotFileMode.shape())
	if !ok || n.Decode(&mode) != nil {
		return nil, false, false
	}
	if mode == nil {
		return nil, false, true
	}
	// The author meant the octal number the value starts with.
	meant := strings.TrimLeft(perm, " \t")
	if end := strings.IndexFunc(meant, func(r rune) bool { return r < '0' || r > '7' }); end >= 0 {
		meant = meant[:end]
	}
	v, err := strconv.ParseInt(meant, 8, 64)
	return mode, err == nil && meant[0] == '0' && int(v) == *mode, true
}

// octalDigits: "0" followed by at most eight octal digits.
func octalDigits(s string) bool {
	if s == "" || s[0] != '0' || len(s) > 9 {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return true
}

// A clcBlock is a literal block as CABPK's template writes it: the
// template's lines at indent, values placed verbatim, a value's LF line
// breaks re-indented where the template applies Indent to it.
type clcBlock struct {
	indent int
	// before is the document up to the block's content (its header line
	// "...: |" included), after what follows the block's last line.
	before, after string
	binary        bool
	parts         []blockPart
	// inline holds the first parts, so that most blocks need no slice.
	inline [4]blockPart
}

type blockPart struct {
	s string
	// field names the value; zero for the template's own text.
	field    provisioning.Path
	reindent bool
}

// The block documents of CABPK's template.
const (
	fileBlockHead   = "storage:\n  files:\n    - path: /x\n      # Owner\n      mode: 0\n      contents:\n        inline: |\n"
	binaryBlockHead = "storage:\n  files:\n    - path: /x\n      # Owner\n      mode: 0\n      contents:\n        inline: !!binary |\n"
	fileBlockTail   = "\n    - path: /x\n      mode: 0\n"
	unitBlockHead   = "systemd:\n  units:\n    - name: x.mount\n      enabled: true\n      contents: |\n"
	unitBlockTail   = "\n    - name: x.mount\n      enabled: true\n"
)

// fileBlock is the literal block of a file's contents.
func fileBlock() clcBlock {
	return clcBlock{indent: literalIndent, before: fileBlockHead, after: fileBlockTail}
}

func (k *clcBlock) text(s string) { k.add(blockPart{s: s}) }

func (k *clcBlock) value(field provisioning.Path, v string, reindent bool) {
	k.add(blockPart{s: v, field: field, reindent: reindent})
}

func (k *clcBlock) add(p blockPart) {
	if k.parts == nil {
		k.parts = k.inline[:0]
	}
	k.parts = append(k.parts, p)
}

// blockReading is what YAML reads from a clcBlock.
type blockReading struct {
	content string
	// reindented: the first line set a deeper indentation, which YAML
	// removed from every line.
	reindented bool
	// broken names the values that make CABPK's parser fail, or change the
	// structure of its config; badBase64 that the !!binary block does not
	// decode.
	broken    []provisioning.Path
	badBase64 bool
	// changed names the values read differently than written (apart from
	// the clipping of trailing empty lines).
	changed []provisioning.Path
}

func (r *blockReading) ok() bool { return len(r.broken) == 0 && !r.badBase64 }

// read reads the block as CABPK's YAML does.
func (k *clcBlock) read() blockReading {
	if k.simple() {
		content := clip(k.meant())
		if k.binary {
			raw, err := base64.StdEncoding.DecodeString(content)
			if err != nil {
				return blockReading{badBase64: true}
			}
			return blockReading{content: string(raw)}
		}
		return blockReading{content: content}
	}
	return k.parse()
}

// parse is read's slow path: yaml.v3 reads the block as CABPK writes it.
func (k *clcBlock) parse() blockReading {
	r := blockReading{reindented: k.reindented()}
	shape, err := parseYAML(k.document(func(int) bool { return false }))
	ok, decoded, content := err == nil, false, ""
	if ok {
		content, ok, decoded = k.readWith(shape, func(int) bool { return true })
	}
	switch {
	case !ok:
		// Name the values that break it on their own, or all of them.
		var all []provisioning.Path
		for j, p := range k.parts {
			if p.field.IsZero() {
				continue
			}
			all = appendOnce(all, p.field)
			if shape == nil {
				continue
			}
			if _, ok, _ := k.readWith(shape, func(i int) bool { return i == j }); !ok {
				r.broken = appendOnce(r.broken, p.field)
			}
		}
		if len(r.broken) == 0 {
			r.broken = all
		}
		return r
	case !decoded:
		r.badBase64 = true
		return r
	}
	r.content = content
	if !k.binary && content != clip(k.meant()) {
		var all []provisioning.Path
		for _, p := range k.parts {
			if p.field.IsZero() {
				continue
			}
			all = appendOnce(all, p.field)
			if !blockSafe(p.s, p.reindent) {
				r.changed = appendOnce(r.changed, p.field)
			}
		}
		if len(r.changed) == 0 {
			r.changed = all
		}
	}
	return r
}

// readWith parses the block with the values real(j) says and the
// placeholder for the others; decoded=false: the !!binary content is not
// base64.
func (k *clcBlock) readWith(shape *yaml.Node, real func(int) bool) (content string, ok, decoded bool) {
	n, ok := readPlaced(k.document(real), shape)
	if !ok {
		return "", false, false
	}
	if err := n.Decode(&content); err != nil {
		return "", true, false
	}
	return content, true, true
}

// simple reports whether the fast path reads the block: every value stays
// on its lines and reads back as written, and the block's first line is not
// indented further.
func (k *clcBlock) simple() bool {
	atStart := true
	for _, p := range k.parts {
		lf := p.field.IsZero() || p.reindent
		if !p.field.IsZero() && !blockSafe(p.s, lf) {
			return false
		}
		if atStart {
			s := strings.TrimLeft(p.s, "\n")
			if s == "" {
				continue
			}
			if s[0] == ' ' || s[0] == '\t' {
				return false
			}
			atStart = false
		}
	}
	return !atStart
}

// meant is the block's content as written: what CABPK means to write.
func (k *clcBlock) meant() string {
	if len(k.parts) == 1 {
		return k.parts[0].s
	}
	var b strings.Builder
	for _, p := range k.parts {
		b.WriteString(p.s)
	}
	return b.String()
}

// clip is YAML's clip chomping of a block whose lines read as written.
func clip(s string) string {
	t := strings.TrimRight(s, "\n")
	switch {
	case t == "":
		return ""
	case len(t) < len(s):
		return s[:len(t)+1]
	}
	return s + "\n"
}

// document is the YAML text CABPK writes for the block, with the values
// real says and the placeholder for the others.
func (k *clcBlock) document(real func(int) bool) string {
	pad := "\n" + strings.Repeat(" ", k.indent)
	var b strings.Builder
	b.WriteString(k.before)
	b.WriteString(pad[1:])
	for j, p := range k.parts {
		s := p.s
		if !p.field.IsZero() && !real(j) {
			s = placeholder
		}
		if p.field.IsZero() || p.reindent {
			s = strings.ReplaceAll(s, "\n", pad)
		}
		b.WriteString(s)
	}
	b.WriteString(k.after)
	return b.String()
}

// reindented reports whether the block's first line is indented beyond
// k.indent, which YAML then removes from every line: its indentation is the
// largest of its leading blank lines and its first non-blank line.
func (k *clcBlock) reindented() bool {
	doc := k.document(func(int) bool { return true })[len(k.before):]
	extra := 0
	for doc != "" {
		line := doc
		if i := strings.IndexByte(doc, '\n'); i >= 0 {
			line, doc = doc[:i], doc[i+1:]
		} else {
			doc = ""
		}
		lead := len(line) - len(strings.TrimLeft(line, " "))
		extra = max(extra, lead)
		if lead < len(line) {
			break
		}
	}
	return extra > k.indent
}

// readPlaced parses doc, in which CABPK's template placed values, and
// returns the node standing where shape (the same document with
// placeholders) has its placeholder; ok=false when the parser rejects doc or
// its structure differs from shape's anywhere else.
func readPlaced(doc string, shape *yaml.Node) (*yaml.Node, bool) {
	n, err := parseYAML(doc)
	if err != nil {
		return nil, false
	}
	var target *yaml.Node
	var same func(got, want *yaml.Node) bool
	same = func(got, want *yaml.Node) bool {
		if want.Kind == yaml.ScalarNode && strings.Contains(want.Value, placeholder) {
			if target != nil {
				return false
			}
			target = got
			return true
		}
		if got.Kind != want.Kind || got.Tag != want.Tag || got.Value != want.Value || got.Anchor != want.Anchor ||
			got.Style != want.Style || got.Alias != nil || len(got.Content) != len(want.Content) {
			return false
		}
		for i := range want.Content {
			if !same(got.Content[i], want.Content[i]) {
				return false
			}
		}
		return true
	}
	if !same(n, shape) || target == nil {
		return nil, false
	}
	return target, true
}

// parseYAML parses the first document of doc as CABPK's transpiler does.
func parseYAML(doc string) (*yaml.Node, error) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		return nil, err
	}
	return &n, nil
}

func appendOnce(list []provisioning.Path, s provisioning.Path) []provisioning.Path {
	for _, x := range list {
		if x.Equal(s) {
			return list
		}
	}
	return append(list, s)
}
