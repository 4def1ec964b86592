package addons

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/addons"
	"github.com/nodeboot/nodeboot/controllers/bootstrapdata"
	"github.com/nodeboot/nodeboot/controllers/nodeauth"
	"github.com/nodeboot/nodeboot/internal/tlsserve"
)

// The fetch endpoint is the manager half of fetching an add-on: it serves
// the manifests the fetch fallback (fetch.go) moved out of a config's
// bootstrap data. Its node half is the fetch step of package addons
// (fetch() in apply.sh, addons/fetchstep.go), which gets each manifest from
// here with the config's credential, trusting only the endpoint's CA, and
// checks its sha256 before applying any.

// FetchHandler serves the add-on manifests of the fetch fallback:
// GET FetchPath<namespace>/<KubeadmConfig>/<sha256> with
// "Authorization: Bearer <credential>" (the transport bootstrap reports
// use too) answers the manifest with that digest from the config's fetch
// Secret when the credential is that config's. Every refusal is the same
// 404 after the same wait, so the endpoint tells a stranger nothing about
// which configs exist; a stranger's request costs no API call (the
// credential is checked against Credentials' index first) and the token is
// never logged.
type FetchHandler struct {
	// Credentials authenticates a fetch (NewFetchIndex).
	Credentials *nodeauth.Index
	// Reader reads the fetch Secret of an authenticated request (the
	// manager's API reader: the index never holds the manifests).
	Reader client.Reader
}

// NewFetchIndex is the index of fetch credentials FetchHandler
// authenticates with; configs reads KubeadmConfigs (the manager's cache).
// The manager sets its RESTConfig, Scheme and Namespace and runs it.
func NewFetchIndex(configs client.Reader) *nodeauth.Index {
	return &nodeauth.Index{Type: FetchSecretType, TokenKey: FetchTokenKey, Configs: configs}
}

var (
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	sha256Hex    = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// fetchTimeout bounds the authentication and the Secret read behind one
// request.
const fetchTimeout = 10 * time.Second

func (h *FetchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, FetchPath)
	parts := strings.Split(rest, "/")
	token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || len(parts) != 3 || !dnsSubdomain.MatchString(parts[0]) || len(parts[0]) > 63 ||
		!dnsSubdomain.MatchString(parts[1]) || !sha256Hex.MatchString(parts[2]) || !bearer || token == "" || r.URL.RawQuery != "" {
		http.NotFound(w, r)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), fetchTimeout)
	defer cancel()
	key := client.ObjectKey{Namespace: parts[0], Name: FetchSecretName(parts[1])}
	var config *bootstrapv1.KubeadmConfig
	err := nodeauth.ErrNotReady
	if h.Credentials != nil {
		config, err = h.Credentials.Authenticate(ctx, parts[0], parts[1], key.Name, token)
	}
	switch {
	case errors.Is(err, nodeauth.ErrUnauthorized):
		http.NotFound(w, r)
		return
	case err != nil:
		if !errors.Is(err, nodeauth.ErrNotReady) {
			ctrl.LoggerFrom(ctx).Error(err, "add-on fetch: cannot authenticate", "Secret", key.String())
		}
		w.Header().Set("Retry-After", "5")
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	// Authenticated: only now is the Secret read, and checked whole again
	// (the index may be a moment behind it).
	s := &corev1.Secret{}
	if err := h.Reader.Get(ctx, key, s); err != nil {
		if !apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).Error(err, "add-on fetch: cannot read Secret", "Secret", key.String())
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		http.NotFound(w, r)
		return
	}
	want := s.Data[FetchTokenKey]
	manifest, found := s.Data[parts[2]]
	if s.Type != FetchSecretType || len(want) == 0 || subtle.ConstantTimeCompare(want, []byte(token)) != 1 ||
		!found || addons.Digest(manifest) != parts[2] || !bootstrapdata.ConfigControls(config, s) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(manifest)))
	if r.Method == http.MethodGet {
		_, _ = w.Write(manifest)
	}
}

// FetchServer runs FetchHandler over TLS with the certificate in CertDir
// (tls.crt, tls.key; reloaded when they change, as the webhook server does),
// on every replica: it needs no leader.
type FetchServer struct {
	Addr    string
	CertDir string
	Handler http.Handler
}

// NeedLeaderElection is false: any replica can serve a node.
func (s *FetchServer) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *FetchServer) Start(ctx context.Context) error {
	srv := &tlsserve.Server{Name: "add-on fetch", Addr: s.Addr, CertDir: s.CertDir, Handler: s.Handler, MaxRequestBytes: 4 << 10}
	return srv.Start(ctx)
}
