package provisioning

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

var errSpecific = NewError(ErrUnsupported, "specific feature missing")

func TestErrorClasses(t *testing.T) {
	for _, tc := range []struct {
		name            string
		err             func() error
		invalid, unsupp bool
		also            error
	}{
		{"nil plan", func() error { var p *Plan; return p.Validate().Err() }, true, false, ErrNilPlan},
		{"Errorf", func() error { var ps Problems; ps.Errorf(NewPath("a"), "bad"); return ps.Err() }, true, false, nil},
		{"hazard", func() error { var ps Problems; ps.Hazardf(NewPath("a"), "unsafe"); return ps.Err() }, true, false, nil},
		{"Unsupported", func() error { var ps Problems; Unsupported(&ps, "p", NewPath("a"), "x"); return ps.Err() }, false, true, nil},
		{"UnsupportedErr", func() error {
			var ps Problems
			UnsupportedErr(&ps, ErrCompressionUnsupported, "p", NewPath("options", "compress"), "compression")
			return ps.Err()
		}, false, true, ErrCompressionUnsupported},
		{"Wrapf with a package sentinel", func() error { var ps Problems; ps.Wrapf(NewPath("a"), errSpecific, "at %d", 1); return ps.Err() }, false, true, errSpecific},
		{"Reportf", func() error { var ps Problems; ps.Reportf(NewPath("a"), errSpecific, "x"); return ps.Err() }, false, true, errSpecific},
		{"AddError with a foreign cause", func() error { var ps Problems; ps.AddError(NewPath("a"), fs.ErrNotExist); return ps.Err() }, true, false, fs.ErrNotExist},
		{"mixed problems match both", func() error {
			var ps Problems
			ps.Errorf(NewPath("a"), "bad")
			Unsupported(&ps, "p", NewPath("b"), "x")
			return ps.Err()
		}, true, true, nil},
		{"too large, wrapped", func() error { return fmt.Errorf("%w: 20 bytes, budget 10", ErrTooLarge) }, true, false, ErrTooLarge},
		{"unknown format", func() error { _, err := Get("no-such-format"); return err }, false, true, ErrUnknownFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, ErrInvalid); got != tc.invalid {
				t.Errorf("errors.Is(ErrInvalid) = %v, want %v: %v", got, tc.invalid, err)
			}
			if got := errors.Is(err, ErrUnsupported); got != tc.unsupp {
				t.Errorf("errors.Is(ErrUnsupported) = %v, want %v: %v", got, tc.unsupp, err)
			}
			if tc.also != nil && !errors.Is(err, tc.also) {
				t.Errorf("errors.Is(%v) = false: %v", tc.also, err)
			}
			var ps Problems
			var p Problem
			if errors.As(err, &ps) != errors.As(err, &p) {
				t.Errorf("errors.As finds Problems but not a Problem (or the reverse): %v", err)
			}
		})
	}
}

func TestProblemsAsAndMessages(t *testing.T) {
	var ps Problems
	ps.Warnf(NewPath("w"), "only a warning")
	ps.Wrapf(NewPath("options", "version"), errSpecific, "version %q", "9")
	err := fmt.Errorf("render: %w", ps.Err())
	var got Problems
	if !errors.As(err, &got) || len(got) != 1 {
		t.Fatalf("errors.As(*Problems) = %v", got)
	}
	if want := `options.version: specific feature missing: version "9"`; got.Error() != want {
		t.Errorf("message %q, want %q", got.Error(), want)
	}
	if errors.Is(Problems{{Path: NewPath("w"), Severity: SeverityWarning}}, ErrInvalid) {
		t.Error("a warning matches ErrInvalid")
	}
	if (Problem{Message: "no path"}).String() != "no path" {
		t.Error("a problem without a path prints a leading separator")
	}
}

func TestNewErrorIsItsOwnSentinel(t *testing.T) {
	a, b := NewError(ErrInvalid, "same text"), NewError(ErrInvalid, "same text")
	if errors.Is(a, b) || !errors.Is(a, a) || !errors.Is(a, ErrInvalid) || errors.Is(a, ErrUnsupported) {
		t.Fatal("NewError sentinels must match themselves and their class only")
	}
}

func TestProblemEqual(t *testing.T) {
	p := Problem{Path: NewPath("a").Index(1), Message: "m", Err: errSpecific}
	q := Problem{Path: NewPath("a").Index(1), Message: "m", Err: errSpecific}
	if !p.Equal(q) {
		t.Error("equal problems differ")
	}
	q.Err = nil
	if p.Equal(q) {
		t.Error("problems with different Err are equal")
	}
}
