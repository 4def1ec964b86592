package nodereport

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/controllers/bootstrapdata"
)

// ErrNoStoredCredential: a rebuild found no credential Secret of the
// config's own, so the reporter in its data cannot be rebuilt.
var ErrNoStoredCredential = errors.New("no bootstrap report credential Secret of its own")

// StoredCredential is the credential Secret the manager saved for config,
// read through r: the right type, controlled by config (Kind, name, UID)
// and holding a credential. A rebuild embeds it where the manager embedded
// a fresh one, so data with a reporter rebuilds to the same bytes.
func StoredCredential(ctx context.Context, r client.Reader, config *bootstrapv1.KubeadmConfig) (*corev1.Secret, error) {
	key := client.ObjectKey{Namespace: config.Namespace, Name: CredentialSecretName(config.Name)}
	s := &corev1.Secret{}
	if err := r.Get(ctx, key, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("Secret %s: %w", key, ErrNoStoredCredential)
		}
		return nil, fmt.Errorf("get Secret %s: %w", key, err)
	}
	if s.Type != CredentialSecretType || !bootstrapdata.ConfigControls(config, s) || len(s.Data[CredentialKey]) == 0 {
		return nil, fmt.Errorf("Secret %s: %w", key, ErrNoStoredCredential)
	}
	return s, nil
}
