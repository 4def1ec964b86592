// Package tlsserve runs the manager's node-facing HTTPS endpoints (add-on
// fetch, bootstrap reports): TLS from a certificate directory that is
// reloaded when cert-manager renews it, bounded requests, and a graceful
// stop with the manager.
package tlsserve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// Server is a manager Runnable serving Handler over TLS with CertDir's
// tls.crt and tls.key, on every replica: nodes may reach any of them.
type Server struct {
	// Name says what is served, for logs and errors ("add-on fetch").
	Name    string
	Addr    string
	CertDir string
	Handler http.Handler
	// MaxRequestBytes caps a request body; the handler may cap lower.
	MaxRequestBytes int64
	// Ready, when set, receives the listening address once the server
	// accepts connections (tests bind ":0").
	Ready chan<- net.Addr
}

// NeedLeaderElection is false: any replica can serve a node.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	cw, err := certwatcher.New(filepath.Join(s.CertDir, "tls.crt"), filepath.Join(s.CertDir, "tls.key"))
	if err != nil {
		return fmt.Errorf("%s server: %w", s.Name, err)
	}
	go func() { _ = cw.Start(ctx) }()
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("%s server: %w", s.Name, err)
	}
	srv := &http.Server{
		Handler:           http.MaxBytesHandler(s.Handler, s.MaxRequestBytes),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: cw.GetCertificate},
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		// The manager's context has ended: shutting down needs a fresh one.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	ctrl.LoggerFrom(ctx).Info("Serving "+s.Name+" endpoint", "address", ln.Addr().String())
	if s.Ready != nil {
		s.Ready <- ln.Addr()
	}
	if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s server: %w", s.Name, err)
	}
	<-done
	return nil
}
