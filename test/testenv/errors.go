package testenv

import (
	"errors"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
)

// CheckErrorClasses fails t unless err is an error that matches
// provisioning.ErrInvalid and ErrUnsupported exactly as said, and also
// (when not nil) with errors.Is.
func CheckErrorClasses(t testing.TB, err error, invalid, unsupp bool, also error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if got := errors.Is(err, provisioning.ErrInvalid); got != invalid {
		t.Errorf("errors.Is(ErrInvalid) = %v, want %v: %v", got, invalid, err)
	}
	if got := errors.Is(err, provisioning.ErrUnsupported); got != unsupp {
		t.Errorf("errors.Is(ErrUnsupported) = %v, want %v: %v", got, unsupp, err)
	}
	if also != nil && !errors.Is(err, also) {
		t.Errorf("errors.Is(%v) = false: %v", also, err)
	}
}
