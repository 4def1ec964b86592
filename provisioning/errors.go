package provisioning

import "errors"

// The two classes every Render and Check error of every provisioner falls
// into. Match them with errors.Is; a package's own sentinels (such as
// ignition.ErrAdditionalConfig) match one of them too, so a caller can be as
// specific as it likes.
var (
	// ErrInvalid: the Plan or the Options are wrong; the input must change.
	ErrInvalid = errors.New("invalid plan")
	// ErrUnsupported: the Plan or the Options are valid, but the chosen
	// provisioner (or dialect) cannot express them; another provisioner may.
	ErrUnsupported = errors.New("not supported by the provisioner")
)

var (
	// ErrUnknownFormat is returned by Get for a format nobody registered. It
	// matches ErrUnsupported.
	ErrUnknownFormat = NewError(ErrUnsupported, "no provisioner registered for format")
	// ErrTooLarge is returned when an output exceeds Options.MaxBytes. It
	// matches ErrInvalid: the budget or the Plan must change.
	ErrTooLarge = NewError(ErrInvalid, "rendered output exceeds the size budget")
	// ErrCompressionUnsupported is the problem of Options.Compress for a
	// provisioner or dialect that cannot compress its output. It matches
	// ErrUnsupported; callers that compress only when they can test for it
	// in Check's problems.
	ErrCompressionUnsupported = NewError(ErrUnsupported, "compressed output is not supported")
	// ErrNilPlan is the problem of a nil Plan. It matches ErrInvalid.
	ErrNilPlan = NewError(ErrInvalid, "plan is nil")
)

// NewError returns a new sentinel error with message msg that also matches
// class (ErrInvalid or ErrUnsupported) with errors.Is. Provisioner packages
// define their own sentinels with it, so one errors.Is on the class covers
// every provisioner.
func NewError(class error, msg string) error { return &classError{msg: msg, class: class} }

type classError struct {
	msg   string
	class error
}

func (e *classError) Error() string { return e.msg }
func (e *classError) Unwrap() error { return e.class }
