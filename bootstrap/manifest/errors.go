package manifest

import (
	"errors"
	"fmt"
)

// Errors Parse and Documents wrap, so callers can tell the classes of bad
// input apart with errors.Is. Messages name the document, object and field,
// never a value.
var (
	// ErrTooLarge: an input, document, alias expansion or rendered output
	// exceeds its limit (limits.go).
	ErrTooLarge = errors.New("too large")
	// ErrEncoding: the input is not UTF-8, or UTF-16 with a byte-order mark.
	ErrEncoding = errors.New("unsupported encoding")
	// ErrSyntax: the document stream or a document is not valid YAML, or
	// holds what the reader refuses to guess about (a directive, content on
	// a separator line).
	ErrSyntax = errors.New("invalid YAML")
	// ErrDuplicateKey: a mapping has the same key twice; YAML decoders keep
	// one of them silently.
	ErrDuplicateKey = errors.New("duplicate key")
	// ErrNotObject: a document has no apiVersion or kind.
	ErrNotObject = errors.New("not a Kubernetes object")
	// ErrKind: a document has a kind nodeboot reads, in an apiVersion it does
	// not read, or a kind in a Cluster API bootstrap group it does not know.
	ErrKind = errors.New("unsupported kind")
	// ErrInvalid: a document does not decode into its kind, or its CRD's
	// schema or CEL rules refuse it as the API server would.
	ErrInvalid = errors.New("invalid object")
)

// classError reads as its message and matches its class with errors.Is.
type classError struct {
	class error
	msg   string
}

func (e *classError) Error() string { return e.msg }
func (e *classError) Unwrap() error { return e.class }

func errorf(class error, format string, args ...any) error {
	return &classError{class: class, msg: fmt.Sprintf(format, args...)}
}

// TooLarge is an error of class ErrTooLarge with the given message, for the
// limits callers apply (the CLI's input and output).
func TooLarge(format string, args ...any) error { return errorf(ErrTooLarge, format, args...) }
