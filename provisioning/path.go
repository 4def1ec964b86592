package provisioning

import (
	"strconv"
	"strings"
)

// Path is a field path such as spec.files[2].content, built from typed
// elements rather than formatted text, so code that needs to know which field
// a Problem is about (or where a Plan element came from) compares elements
// instead of parsing strings. It follows Ignition's vcontext paths: a value
// that is cheap to extend and printed only when a message needs it.
//
// A Path may start in a named input object (see In): problems about a Plan
// built from several objects (a KubeadmConfig, a FirstBootAddon) then say
// which object the fields belong to.
//
// The zero Path is empty. Paths are immutable: Field, Index and Key return a
// new Path and share the receiver's elements, so extending one never changes
// another. Compare Paths with Equal, not ==.
type Path struct {
	obj  *ObjectRef
	last *pathNode
	// fields: the value at the path has the field names of the Plan
	// element it becomes (WithFields); Member appends to it.
	fields bool
	// exact: the path is a caller's Origin a Member was asked of; it
	// stays as it is however it is extended.
	exact bool
}

// WithFields marks p as the path of an input value that has the field
// names of the Plan element it becomes, as a KubeadmConfig's spec.files[2]
// has path, owner and permissions: problems about one of the element's
// fields are then reported under p at that field
// (spec.files[2].permissions). The Plan's own element paths (files[2]) are
// marked so. Without the mark an Origin is where every problem about its
// element is reported, exactly: the caller's value may be, say, a whole
// config rendered into one file (spec.serverConfig), which has no
// permissions field for a problem to name.
func (p Path) WithFields() Path {
	p.fields = true
	return p
}

// Member is the path of field of the element at p (an element's Origin or
// its Plan path): p.Field(field) when p has the Plan's field names
// (WithFields, or p names an input object as a whole), else p itself,
// which then stays p whatever Field, Index or Key add to it, so a problem
// about a drop-in or an SSH key of such an element sits at the element.
func (p Path) Member(field string) Path {
	if p.exact {
		return p
	}
	if p.fields || p.last == nil {
		return p.Field(field)
	}
	p.exact = true
	return p
}

type pathNode struct {
	parent *pathNode
	elem   PathElement
	depth  int
}

// PathElementKind says what a PathElement selects.
type PathElementKind int

const (
	// FieldElement selects a named field: ".name".
	FieldElement PathElementKind = iota
	// IndexElement selects a list entry: "[2]".
	IndexElement
	// KeyElement selects a map entry: "[key]" (for example an annotation).
	KeyElement
)

// PathElement is one step of a Path.
type PathElement struct {
	Kind PathElementKind
	// Name is the field name (FieldElement) or the map key (KeyElement).
	Name string
	// Index is the list index (IndexElement).
	Index int
}

// ObjectRef names an input object: a Kubernetes object for Cluster API
// providers ("KubeadmConfig ns/name"), or any named input document of another
// provider. It is a value to compare, never a string to parse.
type ObjectRef struct {
	Kind      string
	Namespace string
	Name      string
}

// String is "Kind namespace/name", "Kind name" without a namespace, and just
// the kind without a name.
func (r ObjectRef) String() string {
	switch {
	case r.Name == "":
		return r.Kind
	case r.Namespace == "":
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// IsZero reports whether r names no object.
func (r ObjectRef) IsZero() bool { return r == ObjectRef{} }

// NewPath returns the path of field and, under it, each of more:
// NewPath("spec", "files") is spec.files.
func NewPath(field string, more ...string) Path {
	p := Path{}.Field(field)
	for _, f := range more {
		p = p.Field(f)
	}
	return p
}

// Field returns the path of the named field under p.
func (p Path) Field(name string) Path {
	return p.with(PathElement{Kind: FieldElement, Name: name})
}

// Index returns the path of entry i of the list at p.
func (p Path) Index(i int) Path {
	return p.with(PathElement{Kind: IndexElement, Index: i})
}

// Key returns the path of entry key of the map at p, printed as p[key].
func (p Path) Key(key string) Path {
	return p.with(PathElement{Kind: KeyElement, Name: key})
}

// In returns p as a path inside the input object obj.
func (p Path) In(obj ObjectRef) Path {
	if obj.IsZero() {
		p.obj = nil
		return p
	}
	p.obj = &obj
	return p
}

// Object is the input object p starts in; zero when p is a path of the
// Plan or of the provider's main input object.
func (p Path) Object() ObjectRef {
	if p.obj == nil {
		return ObjectRef{}
	}
	return *p.obj
}

// Join returns q's elements appended under p. q's object, if any, is ignored:
// the result is in p's object.
func (p Path) Join(q Path) Path {
	for _, e := range q.Elements() {
		p = p.with(e)
	}
	return p
}

func (p Path) with(e PathElement) Path {
	if p.exact {
		return p
	}
	depth := 1
	if p.last != nil {
		depth = p.last.depth + 1
	}
	p.last = &pathNode{parent: p.last, elem: e, depth: depth}
	return p
}

// Len is the number of elements.
func (p Path) Len() int {
	if p.last == nil {
		return 0
	}
	return p.last.depth
}

// IsZero reports whether p has no elements and no object.
func (p Path) IsZero() bool { return p.last == nil && p.obj == nil }

// Elements returns p's elements, first to last.
func (p Path) Elements() []PathElement {
	out := make([]PathElement, p.Len())
	for n := p.last; n != nil; n = n.parent {
		out[n.depth-1] = n.elem
	}
	return out
}

// Last is p's last element; the zero PathElement for an empty path.
func (p Path) Last() PathElement {
	if p.last == nil {
		return PathElement{}
	}
	return p.last.elem
}

// Parent is p without its last element (an empty path stays empty).
func (p Path) Parent() Path {
	if p.last != nil {
		p.last = p.last.parent
	}
	return p
}

// Equal reports whether p and q have the same object and elements.
func (p Path) Equal(q Path) bool {
	if p.Object() != q.Object() || p.Len() != q.Len() {
		return false
	}
	for a, b := p.last, q.last; a != nil; a, b = a.parent, b.parent {
		if a == b {
			return true
		}
		if a.elem != b.elem {
			return false
		}
	}
	return true
}

// HasPrefix reports whether p is prefix or a path under it, in the same
// object.
func (p Path) HasPrefix(prefix Path) bool {
	if p.Object() != prefix.Object() || p.Len() < prefix.Len() {
		return false
	}
	for p.Len() > prefix.Len() {
		p = p.Parent()
	}
	return p.Equal(prefix)
}

// TrimPrefix returns p's elements below prefix as a path (in no object), and
// whether p has that prefix.
func (p Path) TrimPrefix(prefix Path) (Path, bool) {
	if !p.HasPrefix(prefix) {
		return Path{}, false
	}
	var out Path
	for _, e := range p.Elements()[prefix.Len():] {
		out = out.with(e)
	}
	return out, true
}

// String formats p as fields joined by dots, list indexes and map keys in
// brackets: spec.files[2].content, metadata.annotations[example.com/key].
// A path in an object is prefixed with the object and a dot
// ("FirstBootAddon ns/a.manifest"), as add-on problems always read.
func (p Path) String() string {
	if p.last == nil {
		if p.obj != nil {
			return p.obj.String()
		}
		return ""
	}
	var b strings.Builder
	if p.obj != nil {
		b.WriteString(p.obj.String())
	}
	for i, e := range p.Elements() {
		switch e.Kind {
		case IndexElement:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(e.Index))
			b.WriteByte(']')
		case KeyElement:
			b.WriteByte('[')
			b.WriteString(e.Name)
			b.WriteByte(']')
		default:
			if i > 0 || p.obj != nil {
				b.WriteByte('.')
			}
			b.WriteString(e.Name)
		}
	}
	return b.String()
}

// MarshalText makes a Path print as its String in JSON and YAML.
func (p Path) MarshalText() ([]byte, error) { return []byte(p.String()), nil }
