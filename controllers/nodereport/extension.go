package nodereport

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/controllers"
	"github.com/nodeboot/nodeboot/nodereport"
	"github.com/nodeboot/nodeboot/provisioning"
)

// AnnotationFailFast on a KubeadmConfig: "true" stops a cloud-init node's
// command sequence at the first failing command, so its report names the
// real culprit; "false" or absent keeps CABPK's semantics (every command
// runs).
const AnnotationFailFast = "nodeboot.dev/fail-fast"

// ErrUnsupportedFormat is returned for a format the reporter cannot hook
// into.
var ErrUnsupportedFormat = errors.New("bootstrap reports are not supported for this format")

// Extension puts the node reporter into every config's bootstrap data, with
// its credential saved beside it (bootstrap.Result.Secrets: the reconciler
// stores it before the data).
type Extension struct {
	// URL is the endpoint's base as nodes reach it, e.g. https://host:9445.
	URL string
	// CABundle is the PEM nodes trust the endpoint with; empty uses the
	// node's system trust.
	CABundle []byte
	// Stored, when set, rebuilds data that exists instead of minting a
	// credential: the config's own credential Secret is read through it
	// (nodeboot verify, which never writes). See StoredCredential.
	Stored client.Reader
	// Existing, when set, keeps the credential of the config's own
	// credential Secret (StoredCredential), read through it, and mints one
	// only when there is none: new data for the same config (a MachinePool's
	// token rotation) must not lock out the instances still booting from
	// the old data, whose reports would be refused and then dropped. The
	// manager sets it; a credential Secret of another config, or of an
	// earlier config of the same name, is never kept.
	Existing client.Reader
}

var _ controllers.Extension = (*Extension)(nil)

// MutateConfig implements controllers.Extension; the reporter changes no
// kubeadm setting.
func (e *Extension) MutateConfig(context.Context, *clusterv1.Cluster, *bootstrapv1.KubeadmConfig) error {
	return nil
}

// MutatePlan implements controllers.Extension.
func (e *Extension) MutatePlan(ctx context.Context, cluster *clusterv1.Cluster, config *bootstrapv1.KubeadmConfig, result *bootstrap.Result) error {
	failFast := false
	if v, ok := config.Annotations[AnnotationFailFast]; ok {
		switch v {
		case "true":
			failFast = true
		case "false":
		default:
			// The value is the user's: name the annotation only.
			return fmt.Errorf("metadata.annotations[%s]: must be \"true\" or \"false\"", AnnotationFailFast)
		}
	}
	var target nodereport.Target
	switch {
	case result.Format == bootstrap.FormatCloudConfig:
		target = nodereport.CloudInit
	case result.Format == bootstrap.FormatIgnition && result.Options.Version == provisioning.VersionCABPK:
		target = nodereport.IgnitionLegacy
	case result.Format == bootstrap.FormatIgnition:
		target = nodereport.IgnitionV3
	default:
		return fmt.Errorf("%w: spec.format %q", ErrUnsupportedFormat, result.Format)
	}
	base, err := url.Parse(e.URL)
	if err != nil || base.Scheme != "https" || base.Host == "" || base.RawQuery != "" || base.Fragment != "" || base.User != nil {
		return errors.New("bootstrap report URL must be https://host[:port][/path]")
	}
	// The reporter changes the data anyway: kubeadm init need not print
	// its token into the logs the reporter reads.
	result.QuietInitToken()
	newSecret := NewCredentialSecret
	switch {
	case e.Stored != nil:
		newSecret = func(config *bootstrapv1.KubeadmConfig, _ string) (*corev1.Secret, error) {
			return StoredCredential(ctx, e.Stored, config)
		}
	case e.Existing != nil:
		newSecret = func(config *bootstrapv1.KubeadmConfig, cluster string) (*corev1.Secret, error) {
			sec, err := NewCredentialSecret(config, cluster)
			if err != nil {
				return nil, err
			}
			old, err := StoredCredential(ctx, e.Existing, config)
			switch {
			case errors.Is(err, ErrNoStoredCredential):
				return sec, nil
			case err != nil:
				return nil, err
			case len(old.Data[CredentialKey]) < len(sec.Data[CredentialKey]):
				// Weaker than the manager mints (edited by hand): not kept.
				return sec, nil
			}
			// The Secret as NewCredentialSecret makes it, with the kept
			// credential: nothing else of the stored object is carried on.
			sec.Data[CredentialKey] = old.Data[CredentialKey]
			return sec, nil
		}
	}
	sec, err := newSecret(config, cluster.Name)
	if err != nil {
		return err
	}
	err = nodereport.Apply(result.Plan, nodereport.Options{
		URL:        strings.TrimRight(e.URL, "/") + Path + config.Namespace + "/" + config.Name,
		Credential: string(sec.Data[CredentialKey]),
		CABundle:   e.CABundle,
		FailFast:   failFast,
		Target:     target,
	})
	if err != nil {
		return fmt.Errorf("bootstrap report: %w", err)
	}
	result.Secrets = append(result.Secrets, sec)
	// New data for a config whose nodes reported (a MachinePool's token
	// rotation) resets nothing: a node's final result stays final.
	if conditions.Has(config, NodeBootstrappedCondition) {
		return nil
	}
	result.Conditions = append(result.Conditions, metav1.Condition{
		Type: NodeBootstrappedCondition, Status: metav1.ConditionUnknown, Reason: PendingReason,
		Message: "waiting for the node's first report",
	})
	return nil
}
