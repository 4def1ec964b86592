package addons

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
)

// ErrSourceNotFound is wrapped when a ConfigMap or Secret source does not
// exist; it may appear later, so callers retry.
var ErrSourceNotFound = errors.New("add-on source not found")

// SpecError is a FirstBootAddon that cannot be delivered, with the condition
// reason and every offending field.
type SpecError struct {
	// Object is the FirstBootAddon.
	Object bootstrap.ObjectRef
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

// As presents an add-on that can never be delivered as the KubeadmConfig
// reconciler's invalid input: errors.As(err, **bootstrap.InvalidError) finds
// one problem per field, each naming the FirstBootAddon, so the reconciler
// reports them on the KubeadmConfig's DataSecretAvailable condition, writes
// no Secret and does not retry, as for any other input that cannot render.
// A missing source is not invalid (it may still be created) and is retried.
func (e *SpecError) As(target any) bool {
	t, ok := target.(**bootstrap.InvalidError)
	if !ok || e.NotFound || len(e.Errs) == 0 {
		return false
	}
	problems := make([]bootstrap.ObjectProblem, 0, len(e.Errs))
	for _, fe := range e.Errs {
		problems = append(problems, bootstrap.ObjectProblem{Object: e.Object, Problem: provisioning.Problem{
			// field.Error carries its path as text only: it stays one
			// element, printed as it came.
			Path: provisioning.NewPath(fe.Field), Message: fe.ErrorBody(), Severity: provisioning.SeverityError,
		}})
	}
	*t = &bootstrap.InvalidError{Problems: problems}
	return true
}
