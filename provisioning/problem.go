package provisioning

import (
	"errors"
	"fmt"
	"strings"
)

// Severity of a Problem.
type Severity int

const (
	// SeverityError means the Plan cannot be rendered as it is.
	SeverityError Severity = iota
	// SeverityWarning means the output is produced but will likely not do what
	// its author meant.
	SeverityWarning
)

func (s Severity) String() string {
	if s == SeverityWarning {
		return "warning"
	}
	return "error"
}

// Problem is one finding about a Plan, tied to the field that caused it.
//
// A Problem is an error too: errors.Is(problem, ErrInvalid) or
// errors.Is(problem, ErrUnsupported) tells its class, and errors.Is with a
// package's own sentinel (Err) tells what exactly went wrong.
type Problem struct {
	// Path is the field path: the input's (Origin) when known, else the Plan's.
	Path     Path
	Message  string
	Severity Severity
	// Hazard marks an error about input that CABPK renders anyway: the
	// output is unsafe or will not do what was meant, but it is what CABPK
	// writes. Provisioners in CABPK's dialects report hazards as warnings
	// and render (see Tolerate); everywhere else they stay errors.
	Hazard bool
	// Err classifies the problem for errors.Is: ErrUnsupported, or a
	// sentinel made with NewError, or a cause. Nil means ErrInvalid. Its text
	// is not part of Message unless the reporter put it there.
	Err error
}

// String is "path: message", or the message alone for an empty path.
func (p Problem) String() string {
	if p.Path.IsZero() {
		return p.Message
	}
	return p.Path.String() + ": " + p.Message
}

// Error implements error as String does.
func (p Problem) Error() string { return p.String() }

// Unwrap returns what the problem matches with errors.Is: Err and, unless
// Err already is one, the class ErrInvalid.
func (p Problem) Unwrap() []error {
	switch {
	case p.Err == nil:
		return []error{ErrInvalid}
	case errors.Is(p.Err, ErrInvalid) || errors.Is(p.Err, ErrUnsupported):
		return []error{p.Err}
	}
	return []error{p.Err, ErrInvalid}
}

// Equal reports whether p and q say the same about the same field. Err
// values are equal when they are the same error; it lets go-cmp compare
// Problems.
func (p Problem) Equal(q Problem) bool {
	return p.Path.Equal(q.Path) && p.Message == q.Message && p.Severity == q.Severity &&
		p.Hazard == q.Hazard && (p.Err == nil) == (q.Err == nil) && (p.Err == nil || errors.Is(p.Err, q.Err))
}

// Problems accumulates findings; as an error it reports only the errors.
type Problems []Problem

// Errorf adds an error at path.
func (ps *Problems) Errorf(path Path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...), Severity: SeverityError})
}

// Wrapf adds an error at path that matches err with errors.Is; the message
// is err's text, ": " and the formatted text, as fmt.Errorf("%w: ...") reads.
func (ps *Problems) Wrapf(path Path, err error, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: err.Error() + ": " + fmt.Sprintf(format, args...), Severity: SeverityError, Err: err})
}

// Reportf adds an error at path that matches err with errors.Is (a
// sentinel made with NewError, or ErrUnsupported); the message is the
// formatted text alone.
func (ps *Problems) Reportf(path Path, err error, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...), Severity: SeverityError, Err: err})
}

// AddError adds err as an error at path: its text is the message and it
// matches err with errors.Is. Only for errors whose text names no secret.
func (ps *Problems) AddError(path Path, err error) {
	*ps = append(*ps, Problem{Path: path, Message: err.Error(), Severity: SeverityError, Err: err})
}

// Warnf adds a warning at path.
func (ps *Problems) Warnf(path Path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...), Severity: SeverityWarning})
}

// Hazardf adds a hazard at path: an error that CABPK's dialects tolerate.
func (ps *Problems) Hazardf(path Path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...), Severity: SeverityError, Hazard: true})
}

// Tolerate returns the problems with every hazard turned into a warning:
// what a provisioner reports for a dialect that must render whatever CABPK
// renders. The receiver is not changed.
func (ps Problems) Tolerate() Problems {
	out := make(Problems, len(ps))
	for i, p := range ps {
		if p.Hazard {
			p.Severity = SeverityWarning
		}
		out[i] = p
	}
	return out
}

// OutputPath is where a problem about the rendered output as a whole (its
// size) is reported: no input field caused it alone.
var OutputPath = NewPath("output")

// TooLarge is the error of an output over Options.MaxBytes: a Problems
// with one problem at OutputPath that matches ErrTooLarge (and so
// ErrInvalid); the message is ErrTooLarge's text, ": " and the formatted
// text, which should name the provisioner, the size and the budget.
func TooLarge(format string, args ...any) Problems {
	var ps Problems
	ps.Wrapf(OutputPath, ErrTooLarge, format, args...)
	return ps
}

// Escalate returns the problems with every warning turned into an error:
// what a provisioner reports under Options.Strict. The receiver is not
// changed.
func (ps Problems) Escalate() Problems {
	if len(ps) == 0 {
		return ps
	}
	out := make(Problems, len(ps))
	for i, p := range ps {
		p.Severity = SeverityError
		out[i] = p
	}
	return out
}

// Strict returns ps escalated when opts.Strict, else ps itself.
func (ps Problems) Strict(opts Options) Problems {
	if opts.Strict {
		return ps.Escalate()
	}
	return ps
}

// Settle drops each tolerated hazard (a hazard turned warning) at a path
// where an error is reported too: a dialect that refuses what Validate
// only warned about would otherwise tell one cause twice. It returns ps
// itself when there is nothing to drop.
func (ps Problems) Settle() Problems {
	// Only errors can shadow a warning, and a Plan that renders has none.
	var errs map[string]bool
	for _, e := range ps {
		if e.Severity == SeverityError {
			if errs == nil {
				errs = map[string]bool{}
			}
			errs[e.Path.String()] = true
		}
	}
	if errs == nil {
		return ps
	}
	drop := func(w Problem) bool {
		return w.Hazard && w.Severity == SeverityWarning && errs[w.Path.String()]
	}
	var out Problems
	for i, p := range ps {
		if drop(p) {
			if out == nil {
				out = append(make(Problems, 0, len(ps)), ps[:i]...)
			}
			continue
		}
		if out != nil {
			out = append(out, p)
		}
	}
	if out == nil {
		return ps
	}
	return out
}

// Errors returns only the problems of SeverityError.
func (ps Problems) Errors() Problems { return ps.only(SeverityError) }

// Warnings returns only the problems of SeverityWarning.
func (ps Problems) Warnings() Problems { return ps.only(SeverityWarning) }

func (ps Problems) only(s Severity) Problems {
	var out Problems
	for _, p := range ps {
		if p.Severity == s {
			out = append(out, p)
		}
	}
	return out
}

// Err returns the errors as an error, or nil when there are none.
func (ps Problems) Err() error {
	if errs := ps.Errors(); len(errs) > 0 {
		return errs
	}
	return nil
}

// Error joins the problems one per line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the errors among the problems, so errors.Is and errors.As
// see each of them (and through them ErrInvalid, ErrUnsupported and the
// packages' own sentinels).
func (ps Problems) Unwrap() []error {
	out := make([]error, 0, len(ps))
	for _, p := range ps {
		if p.Severity == SeverityError {
			out = append(out, p)
		}
	}
	return out
}

// FieldPath names a field of a Plan element for a Problem: under the
// element's Origin when it came from input (see Path.Member: at the Origin
// exactly unless it has the Plan's field names), else under its Plan path.
// Provisioners use it so every problem points at what the user wrote.
func FieldPath(origin, planPath Path, field string) Path {
	if origin.IsZero() {
		if field == "" {
			return planPath
		}
		return planPath.Field(field)
	}
	if field == "" {
		return origin
	}
	return origin.Member(field)
}
