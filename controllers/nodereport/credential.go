package nodereport

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/internal/objname"
)

// The credential Secret of a KubeadmConfig.
const (
	CredentialSecretType corev1.SecretType = nodebootv1.BootstrapReportSecretType
	CredentialKey                          = "token"
	credentialSuffix                       = nodebootv1.BootstrapReportSecretSuffix
)

// CredentialSecretName names the Secret holding a config's report
// credential.
func CredentialSecretName(config string) string {
	return objname.WithSuffix(config, credentialSuffix)
}

// NewCredentialSecret is a fresh credential for config (256 random bits),
// controlled by it, to be saved before the bootstrap data that embeds it
// (the manager's Extension keeps the config's own when there is one: see
// Extension.Existing).
func NewCredentialSecret(config *bootstrapv1.KubeadmConfig, cluster string) (*corev1.Secret, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("bootstrap report credential: %w", err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: CredentialSecretName(config.Name), Namespace: config.Namespace,
			Labels: map[string]string{clusterv1.ClusterNameLabel: cluster},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig",
				Name: config.Name, UID: config.UID, Controller: ptr.To(true)}},
		},
		Type: CredentialSecretType,
		Data: map[string][]byte{CredentialKey: []byte(base64.RawURLEncoding.EncodeToString(b))},
	}, nil
}

// SaveCredential creates or replaces the config's credential Secret.
func SaveCredential(ctx context.Context, c client.Client, s *corev1.Secret) error {
	if err := c.Create(ctx, s); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		if err := c.Update(ctx, s); err != nil {
			return fmt.Errorf("update Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
	}
	return nil
}
