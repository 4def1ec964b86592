package provisioning

import (
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
type Problem struct {
	// Path is the field path: the input's (Origin) when known, else the Plan's.
	Path     string
	Message  string
	Severity Severity
	// Hazard marks an error about input that CABPK renders anyway: the
	// output is unsafe or will not do what was meant, but it is what CABPK
	// writes. Provisioners in CABPK's dialects report hazards as warnings
	// and render (see Tolerate); everywhere else they stay errors.
	Hazard bool
}

func (p Problem) String() string { return p.Path + ": " + p.Message }

// Problems accumulates findings; as an error it reports only the errors.
type Problems []Problem

// Errorf adds an error at path.
func (ps *Problems) Errorf(path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...), Severity: SeverityError})
}

// Warnf adds a warning at path.
func (ps *Problems) Warnf(path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...), Severity: SeverityWarning})
}

// Hazardf adds a hazard at path: an error that CABPK's dialects tolerate.
func (ps *Problems) Hazardf(path, format string, args ...any) {
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

// FieldPath names a field of a Plan element for a Problem: under the
// element's Origin when it came from input, else under its Plan path.
// Provisioners use it so every problem points at what the user wrote.
func FieldPath(origin, planPath, field string) string {
	base := planPath
	if origin != "" {
		base = origin
	}
	if field == "" {
		return base
	}
	return base + "." + field
}
