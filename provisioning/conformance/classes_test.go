package conformance_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/conformance"
)

// TestClasses: Classes passes an error exactly in the classes asked for
// and reports every class that differs.
func TestClasses(t *testing.T) {
	errOwn := errors.New("own sentinel")
	invalid := fmt.Errorf("x: %w", errors.Join(provisioning.ErrInvalid, errOwn))
	unsupported := fmt.Errorf("y: %w", provisioning.ErrUnsupported)
	for _, tc := range []struct {
		name            string
		err             error
		invalid, unsupp bool
		also            []error
		wantFailures    int
	}{
		{"invalid", invalid, true, false, []error{errOwn, nil}, 0},
		{"unsupported", unsupported, false, true, nil, 0},
		{"no error", nil, false, false, nil, 1},
		{"wrong class", unsupported, true, false, nil, 2},
		{"missing sentinel", unsupported, false, true, []error{errOwn}, 1},
		{"plain error", errors.New("z"), true, true, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := conformance.Classes(tc.err, tc.invalid, tc.unsupp, tc.also...)
			got := 0
			if err != nil {
				got = 1
				if j, ok := err.(interface{ Unwrap() []error }); ok {
					got = len(j.Unwrap())
				}
			}
			if got != tc.wantFailures {
				t.Fatalf("Classes found %d failures, want %d: %v", got, tc.wantFailures, err)
			}
			if errors.Is(err, provisioning.ErrInvalid) || errors.Is(err, provisioning.ErrUnsupported) {
				t.Fatalf("the report is in an error class itself: %v", err)
			}
		})
	}
}
