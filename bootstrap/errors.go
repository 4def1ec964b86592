package bootstrap

import (
	"errors"
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Conditions under which CABPK waits rather than fails; callers requeue.
var (
	// ErrControlPlaneNotInitialized: only the first control-plane machine may
	// bootstrap before the control plane is initialized.
	ErrControlPlaneNotInitialized = errors.New("the cluster's control plane is not initialized yet; only a control-plane Machine can initialize it")
	// ErrNoControlPlaneEndpoint: joins need the Cluster's control-plane endpoint.
	ErrNoControlPlaneEndpoint = errors.New("the Cluster has no spec.controlPlaneEndpoint yet")
	// ErrNoBootstrapToken: a join by bootstrap token needs a token, which the
	// controller creates in the workload cluster before building.
	ErrNoBootstrapToken = errors.New("spec.joinConfiguration.discovery.bootstrapToken.token is empty; a token must be created first")
	// ErrSecretNotFound is what a SecretGetter wraps when a Secret does not exist.
	ErrSecretNotFound = errors.New("secret not found")
)

// ObjectRef names an input object (a KubeadmConfig, a Secret, a Cluster).
// Compare its Kind rather than parsing its String.
type ObjectRef = provisioning.ObjectRef

// ObjectProblem is a problem found on one input object.
type ObjectProblem struct {
	// Object is the object the Problem's Path is in.
	Object ObjectRef
	provisioning.Problem
	// MissingSecret is "namespace/name" when the problem is only that this
	// Secret does not exist (yet): a controller may wait for it rather than
	// treat the input as invalid.
	MissingSecret string
}

// String is "Kind namespace/name: path: message".
func (p ObjectProblem) String() string { return p.Object.String() + ": " + p.Problem.String() }

// Error implements error as String does; Unwrap (from Problem) keeps
// errors.Is(p, provisioning.ErrInvalid) and the provisioners' sentinels.
func (p ObjectProblem) Error() string { return p.String() }

// InvalidError reports input that can never render, one problem per field.
// Retrying does not help; the object must change.
type InvalidError struct {
	Problems []ObjectProblem
}

func (e *InvalidError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, so errors.Is(err, provisioning.ErrInvalid)
// (or a provisioner's own sentinel) matches an InvalidError.
func (e *InvalidError) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i := range e.Problems {
		out[i] = e.Problems[i].Problem
	}
	return out
}

type problems struct {
	list []ObjectProblem
}

func (ps *problems) add(object ObjectRef, p provisioning.Problems) {
	for _, pr := range p {
		ps.list = append(ps.list, ObjectProblem{Object: object, Problem: pr})
	}
}

func (ps *problems) errorf(object ObjectRef, path provisioning.Path, format string, args ...any) {
	var p provisioning.Problems
	p.Errorf(path, format, args...)
	ps.add(object, p)
}

// missingSecret records that Secret namespace/name does not exist.
func (ps *problems) missingSecret(object ObjectRef, path provisioning.Path, secretRef, format string, args ...any) {
	ps.errorf(object, path, format, args...)
	ps.list[len(ps.list)-1].MissingSecret = secretRef
}

func (ps *problems) err() error {
	var errs []ObjectProblem
	for _, p := range ps.list {
		if p.Severity == provisioning.SeverityError {
			errs = append(errs, p)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &InvalidError{Problems: errs}
}
