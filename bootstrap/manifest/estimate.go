package manifest

// estimateNodes bounds from above the YAML nodes of one document without
// parsing it, in one pass and no allocation, so that a document of more
// than MaxDocumentNodes is refused before yaml.v3 builds a tree of it: the
// densest 8 MiB document is four million nodes, which cost 896 MB and 23 s
// to build only to be refused. It stops counting once the count passes
// limit.
//
// Every node starts at a place the scan counts: a line (a key, an item's
// continuation), an indicator ("- ", "? ", ": ", and in flow "[", "{",
// ",", ":"), each weighted by the most nodes it can start (an implicit
// empty key or value, a collection). Quoted scalars, block scalars and
// comments count once or not at all, whatever they contain. Where the scan
// cannot tell, it counts: an estimate may be high, never low, so an input
// the parser would build a large tree of is never let through.
func estimateNodes(raw []byte, limit int) int {
	s := scanner{raw: raw, limit: limit}
	s.run()
	return s.n
}

type scanner struct {
	raw   []byte
	limit int
	n     int
	flow  int // depth of flow collections
	// quote is the open quote ('"' or '\'') of a quoted scalar that goes on
	// past the end of a line, 0 when none.
	quote byte
	// block is set after a block scalar's indicator: the lines that follow
	// and are more indented than parent are its content.
	block   bool
	parent  int // column of the node owning the block scalar
	content int // indentation of its content, -1 until its first line
}

func (s *scanner) run() {
	for start := 0; start < len(s.raw) && s.n <= s.limit; {
		end := start
		for end < len(s.raw) && s.raw[end] != '\n' {
			end++
		}
		s.line(s.raw[start:end])
		start = end + 1
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

// flowIndicator reports the characters that end a plain scalar in flow.
func flowIndicator(c byte) bool { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' }

func (s *scanner) line(l []byte) {
	indent := 0
	for indent < len(l) && l[indent] == ' ' {
		indent++
	}
	blank := true
	for _, c := range l[indent:] {
		if !isBlank(c) {
			blank = false
			break
		}
	}
	if s.block {
		switch {
		case blank:
			return
		case s.content < 0 && indent > s.parent:
			s.content = indent
			return
		case s.content >= 0 && indent >= s.content:
			return
		}
		s.block = false
	}
	i := indent
	if s.quote != 0 {
		if i = s.skipQuoted(l, i, s.quote); i < 0 {
			return
		}
	} else if !blank && l[indent] != '#' && s.flow == 0 {
		s.n++ // a key, or any node a line starts
	}
	s.tokens(l, i)
}

// tokens scans l from i, at a token start or after a closed quoted scalar.
func (s *scanner) tokens(l []byte, i int) {
	atStart := true // a node or indicator may start at i
	plain := false  // inside a plain scalar
	owner := i      // column of the node an indicator on this line belongs to
	for i < len(l) {
		c := l[i]
		next := byte(' ')
		if i+1 < len(l) {
			next = l[i+1]
		}
		switch {
		case isBlank(c):
			atStart = true
			i++
			continue
		case c == '#' && (i == 0 || isBlank(l[i-1])):
			return
		case c == ':' && (isBlank(next) || s.flow > 0 && (flowIndicator(next) || !plain)):
			s.n += 2
			plain, atStart = false, true
			i++
			continue
		case plain && s.flow == 0:
			i++
			continue
		case plain && !flowIndicator(c):
			i++
			continue
		}
		// A token starts here (or a flow indicator ends a plain scalar).
		plain = false
		switch {
		case (c == '-' || c == '?') && isBlank(next) && atStart:
			s.n += 2
			owner = i
			i++
		case c == '[' || c == '{':
			s.flow++
			s.n += 3
			i++
		case c == ']' || c == '}':
			if s.flow > 0 {
				s.flow--
			}
			i++
		case c == ',':
			s.n += 2
			i++
		case !atStart:
			// Text glued to a closing quote or bracket: part of an error or of
			// a plain scalar; either way no new node.
			plain = true
			i++
		case c == '"' || c == '\'':
			s.n++
			if i = s.skipQuoted(l, i+1, c); i < 0 {
				return
			}
			atStart = false
		case c == '&' || c == '!':
			// An anchor or tag: the node follows it.
			for i < len(l) && !isBlank(l[i]) {
				i++
			}
		case (c == '|' || c == '>') && s.flow == 0:
			s.n++
			s.block, s.parent, s.content = true, owner, -1
			return
		default:
			if i == owner || owner < i && s.flow == 0 {
				owner = i
			}
			s.n++
			plain = true
			i++
		}
	}
}

// skipQuoted skips a quoted scalar from i (after the opening quote) and
// returns the index after the closing quote, or -1 when the scalar goes on
// past the line (the state remembers it).
func (s *scanner) skipQuoted(l []byte, i int, q byte) int {
	for i < len(l) {
		switch {
		case q == '"' && l[i] == '\\':
			i += 2
			continue
		case l[i] == q && q == '\'' && i+1 < len(l) && l[i+1] == '\'':
			i += 2
			continue
		case l[i] == q:
			s.quote = 0
			return i + 1
		}
		i++
	}
	s.quote = q
	return -1
}
