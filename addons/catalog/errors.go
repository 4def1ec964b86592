package catalog

import (
	"errors"
	"fmt"
)

var (
	// ErrUnknownBuiltin: no built-in add-on has this name.
	ErrUnknownBuiltin = errors.New("unknown built-in add-on")
	// ErrUnknownVersion: the built-in add-on has no such version.
	ErrUnknownVersion = errors.New("unknown version of built-in add-on")
	// ErrInvalidParameter is wrapped by every *ParamError.
	ErrInvalidParameter = errors.New("invalid add-on parameter")
)

// ParamError is a parameter that cannot be used. Field names the Params field
// in its JSON spelling ("localIP", "podCIDR", ...), so callers can map it to
// their own field paths.
type ParamError struct {
	Field  string
	Value  string
	Detail string
}

func (e *ParamError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s", e.Field, e.Detail)
	}
	return fmt.Sprintf("%s: %q: %s", e.Field, e.Value, e.Detail)
}

// Unwrap makes errors.Is(err, ErrInvalidParameter) true.
func (e *ParamError) Unwrap() error { return ErrInvalidParameter }
