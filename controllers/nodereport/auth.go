package nodereport

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/controllers/nodeauth"
)

// NewCredentialIndex is the index of report credentials the Handler
// authenticates with; configs reads KubeadmConfigs (the manager's cache).
// The manager sets its RESTConfig, Scheme and Namespace and runs it.
func NewCredentialIndex(configs client.Reader) *nodeauth.Index {
	return &nodeauth.Index{Type: CredentialSecretType, TokenKey: CredentialKey, Configs: configs}
}
