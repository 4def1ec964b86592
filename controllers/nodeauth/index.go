// Package nodeauth authenticates the requests nodes send the manager's
// node-facing endpoints (bootstrap reports, add-on fetch) without an API
// call for anyone who does not hold a credential.
//
// An Index learns the credential Secrets of one type from an informer of
// its own (filtered by type, transformed down to the token's digest and
// the controller reference, never the data), so checking a request is a
// map look-up and a constant-time compare. A refused request is answered
// after the same wait whatever was wrong (no such config, no credential,
// a wrong one), so response times tell nothing about which configs exist,
// and that wait is also how a credential written a moment ago, which the
// informer has not delivered yet, still authenticates: the request is
// checked again as soon as the index changes. Only a request whose token
// matches reads anything more, the KubeadmConfig from the manager's cache,
// to check the Secret's controller is that config by name and UID
// (bootstrapdata.ConfigControls, the one owner check).
package nodeauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/controllers/bootstrapdata"
)

// DefaultWait is how long a refused request waits: informers deliver a new
// Secret within milliseconds, and a node retries a refused request.
const DefaultWait = time.Second

// maxToken bounds what is hashed of a presented credential: ours are 43
// characters.
const maxToken = 256

// Index authenticates requests against the credential Secrets of one type.
// Run it with Start (a manager Runnable), or fill it with Add in tests.
type Index struct {
	// Type is the Secret type the index keeps; others are ignored.
	Type corev1.SecretType
	// TokenKey is the data key holding the credential.
	TokenKey string
	// Configs reads KubeadmConfigs; the manager's cache, so that even a
	// request with a matching token costs no API call.
	Configs client.Reader
	// Wait is how long a refused request waits (DefaultWait when zero).
	Wait time.Duration

	// For Start: where and how to watch.
	RESTConfig *rest.Config
	Scheme     *runtime.Scheme
	// Namespace limits the watch (the manager's --namespace); all when empty.
	Namespace string

	mu      sync.Mutex
	entries map[types.NamespacedName]entry
	changed chan struct{}
	synced  atomic.Bool
}

// entry is what the index keeps of a Secret.
type entry struct {
	digest [sha256.Size]byte
	owner  metav1.OwnerReference
}

// digestKey holds the token's digest in a transformed Secret; it cannot be
// a real Secret's key.
const digestKey = "/token-sha256"

// Transform reduces a Secret to what authentication needs: its name, type,
// controller reference and the sha256 of its token. It is the informer's
// transform, so the manifests of a fetch Secret are never kept.
func (x *Index) Transform(in any) (any, error) {
	s, ok := in.(*corev1.Secret)
	if !ok {
		return in, nil
	}
	out := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, UID: s.UID, ResourceVersion: s.ResourceVersion},
		Type:       s.Type,
	}
	if c := metav1.GetControllerOf(s); c != nil {
		out.OwnerReferences = []metav1.OwnerReference{*c}
	}
	if tok, ok := s.Data[x.TokenKey]; ok && len(tok) > 0 {
		d := sha256.Sum256(tok)
		out.Data = map[string][]byte{digestKey: d[:]}
	} else if d, ok := s.Data[digestKey]; ok {
		// Already transformed (the informer's handlers get what its store
		// holds); no real Secret has this key.
		out.Data = map[string][]byte{digestKey: d}
	}
	return out, nil
}

// Add puts a Secret (as read, or as Transform made it) in the index.
func (x *Index) Add(obj any) {
	t, _ := x.Transform(obj)
	s, ok := t.(*corev1.Secret)
	if !ok {
		return
	}
	key := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
	d, c := s.Data[digestKey], metav1.GetControllerOf(s)
	if s.Type != x.Type || len(d) != sha256.Size || c == nil {
		x.remove(key)
		return
	}
	e := entry{owner: *c}
	copy(e.digest[:], d)
	x.mu.Lock()
	if x.entries == nil {
		x.entries = map[types.NamespacedName]entry{}
	}
	x.entries[key] = e
	x.notifyLocked()
	x.mu.Unlock()
}

// Delete removes a Secret (or the informer's tombstone of one).
func (x *Index) Delete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if o, ok := obj.(metav1.Object); ok {
		x.remove(types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
	}
}

func (x *Index) remove(key types.NamespacedName) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.entries[key]; ok {
		delete(x.entries, key)
		x.notifyLocked()
	}
}

// notifyLocked wakes the requests waiting for a change; mu is held.
func (x *Index) notifyLocked() {
	if x.changed != nil {
		close(x.changed)
		x.changed = nil
	}
}

// MarkSynced makes the index answer requests; Start does it once the
// informer has listed every Secret, tests after Add.
func (x *Index) MarkSynced() { x.synced.Store(true) }

// Synced reports whether the index answers requests.
func (x *Index) Synced() bool { return x.synced.Load() }

// NeedLeaderElection is false: every replica serves nodes.
func (x *Index) NeedLeaderElection() bool { return false }

// Start watches the Secrets of x.Type with an informer of its own and keeps
// the index until ctx ends.
func (x *Index) Start(ctx context.Context) error {
	opts := cache.Options{
		Scheme: x.Scheme,
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {
			Field:     fields.OneTermEqualSelector("type", string(x.Type)),
			Transform: x.Transform,
		}},
	}
	if x.Namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{x.Namespace: {}}
	}
	c, err := cache.New(x.RESTConfig, opts)
	if err != nil {
		return fmt.Errorf("credential index for Secrets of type %s: %w", x.Type, err)
	}
	inf, err := c.GetInformer(ctx, &corev1.Secret{})
	if err != nil {
		return fmt.Errorf("credential index for Secrets of type %s: %w", x.Type, err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    x.Add,
		UpdateFunc: func(_, obj any) { x.Add(obj) },
		DeleteFunc: x.Delete,
	}); err != nil {
		return fmt.Errorf("credential index for Secrets of type %s: %w", x.Type, err)
	}
	errs, synced := make(chan error, 1), make(chan bool, 1)
	go func() { errs <- c.Start(ctx) }()
	go func() { synced <- c.WaitForCacheSync(ctx) }()
	select {
	case err := <-errs:
		return err
	case ok := <-synced:
		if ok {
			x.MarkSynced()
		}
	}
	return <-errs
}

// Authenticate checks token against the credential in Secret secret of
// KubeadmConfig ns/config. It returns the config on success; ErrUnauthorized
// after the index's Wait on any refusal; ErrNotReady before the index has
// synced; another error when the config cannot be read from the cache.
func (x *Index) Authenticate(ctx context.Context, ns, config, secret, token string) (*bootstrapv1.KubeadmConfig, error) {
	if !x.synced.Load() {
		return nil, ErrNotReady
	}
	wait := x.Wait
	if wait <= 0 {
		wait = DefaultWait
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	if len(token) > maxToken {
		token = ""
	}
	want := sha256.Sum256([]byte(token))
	key := types.NamespacedName{Namespace: ns, Name: secret}
	for {
		x.mu.Lock()
		e, found := x.entries[key]
		if x.changed == nil {
			x.changed = make(chan struct{})
		}
		changed := x.changed
		x.mu.Unlock()
		var poll <-chan time.Time
		if found && token != "" && subtle.ConstantTimeCompare(e.digest[:], want[:]) == 1 {
			cfg := &bootstrapv1.KubeadmConfig{}
			err := x.Configs.Get(ctx, client.ObjectKey{Namespace: ns, Name: config}, cfg)
			switch {
			case err == nil && bootstrapdata.ConfigControls(cfg, &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{e.owner}}):
				return cfg, nil
			case err != nil && !apierrors.IsNotFound(err):
				return nil, fmt.Errorf("read KubeadmConfig %s/%s: %w", ns, config, err)
			}
			// A Secret of an earlier config of that name: refused, unless
			// the cache is about to deliver the config it belongs to (it
			// changes without telling the index: look again shortly).
			poll = time.After(50 * time.Millisecond)
		}
		select {
		case <-changed:
		case <-poll:
		case <-deadline.C:
			return nil, ErrUnauthorized
		case <-ctx.Done():
			return nil, ErrUnauthorized
		}
	}
}
