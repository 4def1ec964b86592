package manifest

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// document is one document of the input, parsed once into YAML nodes so its
// structure is checked before any decoder sees it: sigs.k8s.io/yaml (what
// kubectl uses, and what decodes the objects here) keeps the last of two
// equal keys and expands aliases without a budget of its own.
//
// Only what the readers need is kept of the nodes (the TypeMeta), so the
// tree is garbage before a decoder builds its own.
type document struct {
	index   int    // 1-based position in the stream
	line    int    // input line the document starts on
	raw     []byte // the document's bytes
	mapping bool   // the document is a YAML mapping
	tm      TypeMeta
}

// parseDocument parses and checks raw; a nil root means the document holds
// only blanks and comments. When the checks fail the root is returned with
// the error, so the message can name the object.
func parseDocument(raw []byte, line int) (*yaml.Node, error) {
	// Refused before yaml.v3 builds the tree: building it is what costs.
	if estimateNodes(raw, MaxDocumentNodes) > MaxDocumentNodes {
		return nil, errorf(ErrTooLarge, "more than %d YAML nodes (MaxDocumentNodes), counted before parsing", MaxDocumentNodes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var n yaml.Node
	if err := dec.Decode(&n); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, errorf(ErrSyntax, "%s", yamlMessage(err, line))
	}
	// A second document here means a separator the line reader did not see
	// (a CR-only line end, say); reading only the first would lose the rest.
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errorf(ErrSyntax, "holds more than one YAML document; separate documents with a \"---\" line (and LF or CRLF line ends)")
	}
	root := &n
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	w := walker{line: line - 1, anchored: map[*yaml.Node]int64{}, active: map[*yaml.Node]bool{}}
	if err := w.walk(root, nil, 0); err != nil {
		return root, err
	}
	size, err := w.expanded(root)
	if err != nil {
		return root, err
	}
	if size > MaxExpandedBytes {
		return root, errorf(ErrTooLarge, "YAML aliases expand the document beyond %d bytes (MaxExpandedBytes)", MaxExpandedBytes)
	}
	return root, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+):`)

// yamlMessage makes a yaml.v3 error name the input's line, not the
// document's.
func yamlMessage(err error, line int) string {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		msg = "line " + strconv.Itoa(n+line-1) + ":" + msg[len(m[0]):]
	}
	return strings.TrimPrefix(msg, "yaml: ")
}

type walker struct {
	line     int // input line before the document, to make node lines absolute
	nodes    int
	anchored map[*yaml.Node]int64
	active   map[*yaml.Node]bool // anchored nodes being expanded, for cycles
}

// fieldPath is a node's place in the document, built into a string only
// for a message: a string per node would cost time and memory quadratic in
// the nesting.
type fieldPath struct {
	parent  *fieldPath
	key     string
	index   int
	isIndex bool
}

func (p *fieldPath) String() string {
	if p == nil {
		return ""
	}
	if p.isIndex {
		return p.parent.String() + "[" + strconv.Itoa(p.index) + "]"
	}
	return childPath(p.parent.String(), p.key)
}

func (w *walker) walk(n *yaml.Node, path *fieldPath, depth int) error {
	w.nodes++
	if w.nodes > MaxDocumentNodes {
		return errorf(ErrTooLarge, "more than %d YAML nodes (MaxDocumentNodes)", MaxDocumentNodes)
	}
	switch n.Kind {
	case yaml.MappingNode:
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag != "!!merge" {
				if first, dup := seen[k.Value]; dup {
					return errorf(ErrDuplicateKey, "%s: duplicate key (lines %d and %d): YAML decoders keep one silently", (&fieldPath{parent: path, key: k.Value}).String(), first+w.line, k.Line+w.line)
				}
				seen[k.Value] = k.Line
			}
			if err := w.walk(k, path, depth+1); err != nil {
				return err
			}
			if err := w.walk(v, &fieldPath{parent: path, key: k.Value}, depth+1); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if err := w.walk(c, &fieldPath{parent: path, index: i, isIndex: true}, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// expanded is the size of n with every alias replaced by what it names: its
// scalars' bytes plus one per node, capped just above MaxExpandedBytes so
// exponential nesting cannot overflow. Anchored nodes are memoised, so the
// cost is linear in the document however much it would expand.
func (w *walker) expanded(n *yaml.Node) (int64, error) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		if w.active[n.Alias] {
			// yaml.v3 accepts an alias inside the node it names; expanded,
			// it never ends.
			return 0, errorf(ErrSyntax, "line %d: YAML alias *%s refers to a node that contains it", n.Line+w.line, truncate(n.Value))
		}
		return w.expanded(n.Alias)
	}
	if v, ok := w.anchored[n]; ok {
		return v, nil
	}
	if n.Anchor != "" {
		w.active[n] = true
		defer delete(w.active, n)
	}
	size := 1 + int64(len(n.Value))
	for _, c := range n.Content {
		cs, err := w.expanded(c)
		if err != nil {
			return 0, err
		}
		size += cs
		if size > MaxExpandedBytes {
			size = MaxExpandedBytes + 1
			break
		}
	}
	if n.Anchor != "" {
		w.anchored[n] = size
	}
	return size, nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// childPath extends a field path the way the API server writes one: dotted
// names, brackets for keys that are not plain identifiers (annotations).
func childPath(path, key string) string {
	key = truncate(key)
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	switch {
	case !plain:
		return path + "[" + strconv.Quote(key) + "]"
	case path == "":
		return key
	}
	return path + "." + key
}
