package addons

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ErrSourceNotFound is wrapped when a ConfigMap or Secret source does not
// exist; it may appear later, so callers retry.
var ErrSourceNotFound = errors.New("add-on source not found")

// SpecError is a FirstBootAddon that cannot be delivered, with the condition
// reason and every offending field.
type SpecError struct {
	// Object is "FirstBootAddon namespace/name".
	Object string
	// Reason is the SourceValid condition reason (api/v1alpha1).
	Reason string
	// Errs name the fields.
	Errs field.ErrorList
	// NotFound is set when the source object is missing (retryable).
	NotFound bool
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("%s: %s", e.Object, e.Errs.ToAggregate().Error())
}

// Unwrap makes errors.Is(err, ErrSourceNotFound) true for missing sources.
func (e *SpecError) Unwrap() error {
	if e.NotFound {
		return ErrSourceNotFound
	}
	return nil
}
