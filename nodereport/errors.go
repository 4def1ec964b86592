package nodereport

import "errors"

var (
	// ErrInvalidOptions is wrapped by every error Options.Validate returns;
	// the message names the option, never its value.
	ErrInvalidOptions = errors.New("invalid bootstrap report options")
	// ErrInvalidPlan is wrapped by Apply's error for a Plan it cannot
	// extend (nil, or one it already extended).
	ErrInvalidPlan = errors.New("cannot add the bootstrap reporter to the plan")
)
