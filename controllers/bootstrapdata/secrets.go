package bootstrapdata

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/bootstrap"
)

// Secrets is the bootstrap.SecretGetter of one build, or of the builds of
// one reconciliation. Cluster certificate Secrets are read as util/secret's
// LookupCached reads them (the cache first, the API server when the cache
// does not have them yet); other Secrets (contentFrom, passwdFrom) straight
// from the API server, as CABPK does. It remembers which Secrets did not
// exist, so a failure caused by a Secret that may yet appear is retried
// instead of reported as terminal.
type Secrets struct {
	cached, live client.Reader
	mu           sync.Mutex
	missing      map[string]bool
}

// NewSecrets reads certificates through the Builder's SecretCachingClient
// first, everything else through its Client.
func (b *Builder) NewSecrets() *Secrets {
	return &Secrets{cached: b.SecretCachingClient, live: b.Client, missing: map[string]bool{}}
}

var _ bootstrap.SecretGetter = (*Secrets)(nil)

// SecretData implements bootstrap.SecretGetter.
func (g *Secrets) SecretData(ctx context.Context, namespace, name string) (map[string][]byte, error) {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	s := &corev1.Secret{}
	if secret.HasPurposeSuffix(name) {
		err := g.cached.Get(ctx, key, s)
		if err == nil {
			return s.Data, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	if err := g.live.Get(ctx, key, s); err != nil {
		if apierrors.IsNotFound(err) {
			g.mu.Lock()
			g.missing[namespace+"/"+name] = true
			g.mu.Unlock()
			return nil, fmt.Errorf("%w: %s/%s", bootstrap.ErrSecretNotFound, namespace, name)
		}
		return nil, err
	}
	return s.Data, nil
}

// WasMissing tells whether a read of the Secret namespace/name found
// nothing.
func (g *Secrets) WasMissing(namespacedName string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.missing[namespacedName]
}
