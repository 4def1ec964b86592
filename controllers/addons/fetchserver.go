package addons

import (
	"context"
	"crypto/subtle"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/addons"
	"github.com/nodeboot/nodeboot/internal/tlsserve"
)

// FetchHandler serves the add-on manifests of the fetch fallback:
// GET FetchPath/<namespace>/<KubeadmConfig>/<sha256>?token=<credential>
// answers the manifest with that digest from the config's fetch Secret when
// the credential is that config's. Every refusal is the same 404, so the
// endpoint tells a stranger nothing about which configs exist; the token
// is compared in constant time and never logged.
type FetchHandler struct {
	// Reader reads the fetch Secrets (the manager's API reader: a node
	// fetches once, right after kubeadm init).
	Reader client.Reader
}

var (
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	sha256Hex    = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// fetchTimeout bounds the Secret read behind one request.
const fetchTimeout = 10 * time.Second

func (h *FetchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, FetchPath)
	parts := strings.Split(rest, "/")
	token := r.URL.Query().Get("token")
	if !ok || len(parts) != 3 || !dnsSubdomain.MatchString(parts[0]) || len(parts[0]) > 63 ||
		!dnsSubdomain.MatchString(parts[1]) || !sha256Hex.MatchString(parts[2]) || token == "" {
		http.NotFound(w, r)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), fetchTimeout)
	defer cancel()
	s := &corev1.Secret{}
	key := client.ObjectKey{Namespace: parts[0], Name: FetchSecretName(parts[1])}
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
	c := metav1.GetControllerOf(s)
	if s.Type != FetchSecretType || len(want) == 0 || subtle.ConstantTimeCompare(want, []byte(token)) != 1 ||
		!found || addons.Digest(manifest) != parts[2] || c == nil || c.Kind != "KubeadmConfig" || c.Name != parts[1] {
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
