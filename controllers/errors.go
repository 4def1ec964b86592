package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/controllers/bootstrapdata"
	"github.com/nodeboot/nodeboot/provisioning"
)

// endpointRequeue is how soon a join waiting for the Cluster's control-plane
// endpoint looks again (CABPK's interval).
const endpointRequeue = 10 * time.Second

// maxConditionProblems bounds how many problems a condition message lists.
const maxConditionProblems = 10

// failed is the one place where an error from building or rendering becomes
// conditions and a reconcile outcome:
//   - a missing control-plane endpoint is waited for, as in CABPK;
//   - a Secret name the data needs that another object holds
//     (bootstrapdata.SecretConflictError) sets the condition and is retried;
//   - input that can never render (*bootstrap.InvalidError, an output over
//     its size budget) sets a condition naming the field paths and returns a
//     reconcile.TerminalError: retrying cannot help until an object changes;
//   - problems that are only about Secrets that do not exist (yet) set the
//     same condition but are retried, because those Secrets may still be
//     created (by a control-plane provider, by the user);
//   - anything else is retried with backoff.
//
// init tells certificate problems of a first control plane (generation)
// from those of a join (missing or corrupt Secrets), for the v1beta1 reason.
func (r *Reconciler) failed(ctx context.Context, s *scope, secrets *bootstrapdata.Secrets, init bool, err error) (ctrl.Result, error) {
	var invalid *bootstrap.InvalidError
	var forbidden *bootstrapdata.ControlPlaneForbiddenError
	var conflict *bootstrapdata.SecretConflictError
	switch {
	case errors.As(err, &conflict):
		// Not terminal: deleting or renaming the Secret is enough.
		markDataSecretFailed(s.config, conflict.Error())
		return ctrl.Result{}, err
	case errors.As(err, &forbidden):
		// Not terminal: the read succeeds once the permission is granted.
		markDataSecretFailed(s.config, forbidden.Error())
		return ctrl.Result{}, err
	case errors.Is(err, bootstrap.ErrNoControlPlaneEndpoint):
		ctrl.LoggerFrom(ctx).V(1).Info("Waiting for Cluster Controller to set Cluster.Spec.ControlPlaneEndpoint")
		return ctrl.Result{RequeueAfter: endpointRequeue}, nil
	case errors.Is(err, provisioning.ErrTooLarge):
		// Before the invalid-input case: ErrTooLarge comes as Problems (at
		// the output), which bootstrap wraps as an InvalidError too.
		markDataSecretTooLarge(s.config, "bootstrap data: "+err.Error())
		return ctrl.Result{}, reconcile.TerminalError(err)
	case errors.As(err, &invalid):
		var certs, other []bootstrap.ObjectProblem
		for _, p := range invalid.Problems {
			if p.Object.Kind == "Secret" {
				certs = append(certs, p)
			} else {
				other = append(other, p)
			}
		}
		if len(certs) > 0 {
			markCertificatesFailed(s.config, init, describe(s, certs))
		}
		if len(other) > 0 {
			markDataSecretFailed(s.config, describe(s, other))
		}
		if onlyMissingSecrets(invalid, secrets) {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	return ctrl.Result{}, err
}

// describe lists problems for a condition message: the field path, prefixed
// with the object when it is not the KubeadmConfig itself.
func describe(s *scope, ps []bootstrap.ObjectProblem) string {
	self := bootstrap.ObjectRef{Kind: "KubeadmConfig", Namespace: s.config.Namespace, Name: s.config.Name}
	lines := make([]string, 0, len(ps))
	for i, p := range ps {
		if i == maxConditionProblems {
			lines = append(lines, fmt.Sprintf("and %d more", len(ps)-i))
			break
		}
		line := p.Problem.String()
		if p.Object != self {
			line = p.Object.String() + ": " + line
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "; ")
}

// onlyMissingSecrets tells whether every problem is only that a Secret this
// reconciliation looked up does not exist yet, which CABPK retries.
func onlyMissingSecrets(invalid *bootstrap.InvalidError, secrets *bootstrapdata.Secrets) bool {
	if secrets == nil || len(invalid.Problems) == 0 {
		return false
	}
	for _, p := range invalid.Problems {
		if p.MissingSecret == "" || !secrets.WasMissing(p.MissingSecret) {
			return false
		}
	}
	return true
}
