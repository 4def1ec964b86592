package bootstrapdata

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Reasons a stored KubeadmConfig is not rebuilt. All of them match ErrSkipped.
var (
	ErrSkipped     = errors.New("skipped")
	ErrNoData      = fmt.Errorf("%w: no data yet (status.dataSecretName is empty)", ErrSkipped)
	ErrNoOwner     = fmt.Errorf("%w: no Machine or MachinePool owner reference", ErrSkipped)
	ErrOwnerGone   = fmt.Errorf("%w: owner gone", ErrSkipped)
	ErrClusterGone = fmt.Errorf("%w: Cluster gone", ErrSkipped)
	ErrPaused      = fmt.Errorf("%w: paused", ErrSkipped)
	ErrDeleting    = fmt.Errorf("%w: being deleted", ErrSkipped)
)

// ErrReporter: the data carries a bootstrap reporter (the config has a
// credential Secret of its own) and the Rebuilder has no Reporter to
// rebuild it with. It is not a skip: data that cannot be compared is not
// proven.
var ErrReporter = errors.New("carries a bootstrap reporter, and the report endpoint's URL and CA bundle are not known")

// ErrTooManyObjects is returned when a kind has more objects than a
// ListReader holds.
var ErrTooManyObjects = errors.New("too many objects")

// ControlPlaneForbiddenError is a control-plane object the manager may not
// read while a file template needs its version. The reconciler shows it in
// DataSecretAvailable and retries: granting the permission is enough.
type ControlPlaneForbiddenError struct {
	// File is the index in spec.files of the first template.
	File int
	// Ref is the Cluster's spec.controlPlaneRef; Namespace is the Cluster's.
	Ref       clusterv1.ContractVersionedObjectReference
	Namespace string
	// Resource is the resource the API server refused (plural, from its
	// answer), "" when the answer did not say.
	Resource string
	err      error
}

func (e *ControlPlaneForbiddenError) Error() string {
	what := e.Ref.Kind
	if e.Resource != "" {
		what = e.Resource
	}
	return fmt.Sprintf("spec.files[%d] is a template and needs the version of the Cluster's control plane %s %s, which the manager may not read: grant get on %s in API group %s (and get on customresourcedefinitions)",
		e.File, e.Ref.Kind, klog.KRef(e.Namespace, e.Ref.Name), what, e.Ref.APIGroup)
}

func (e *ControlPlaneForbiddenError) Unwrap() error { return e.err }

// controlPlaneReadError names the permission when the read was forbidden.
func controlPlaneReadError(cluster *clusterv1.Cluster, file int, err error) error {
	if !apierrors.IsForbidden(err) {
		return err
	}
	fe := &ControlPlaneForbiddenError{File: file, Ref: cluster.Spec.ControlPlaneRef, Namespace: cluster.Namespace, err: err}
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Details != nil {
		if d := st.Status().Details; d.Kind != "" && d.Group == cluster.Spec.ControlPlaneRef.APIGroup {
			fe.Resource = d.Kind
		}
	}
	return fe
}

// SecretConflictError is a Secret the data needs under a name that is
// taken: another object controls the Secret there, or it is of another
// type. nodeboot never overwrites it; the reconciler says so in
// DataSecretAvailable and retries, since deleting or renaming it is enough.
type SecretConflictError struct {
	Namespace, Name string
}

func (e *SecretConflictError) Error() string {
	return fmt.Sprintf("Secret %s exists and is not this KubeadmConfig's (another object controls it, or it is of another type): nodeboot does not overwrite it; delete or rename it",
		klog.KRef(e.Namespace, e.Name))
}
