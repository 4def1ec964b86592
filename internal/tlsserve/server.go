// Package tlsserve runs the manager's node-facing HTTPS endpoints (add-on
// fetch, bootstrap reports): TLS from a certificate directory that is
// reloaded when cert-manager renews it, bounded requests, and a graceful
// stop with the manager.
//
// The endpoints face every workload network, so everything a stranger can
// make the server spend is bounded ahead of the handler (Limits): open
// connections in all and per source, the rate of new connections and
// requests per source and in all, the time a handshake and the headers may
// take. HTTP/2 is off: one request per connection is what nodes send, and
// streams would multiply what one admitted connection can ask for.
package tlsserve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
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
	// Limits bound connections and requests ahead of Handler; zero fields
	// take DefaultLimits'.
	Limits Limits
	// Ready, when set, receives the listening address once the server
	// accepts connections (tests bind ":0").
	Ready chan<- net.Addr
}

// maxHeaderBytes bounds a request's headers (net/http allows 4 KiB more):
// a node sends a request line and a few short headers.
const maxHeaderBytes = 4 << 10

// NeedLeaderElection is false: any replica can serve a node.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	cw, err := certwatcher.New(filepath.Join(s.CertDir, "tls.crt"), filepath.Join(s.CertDir, "tls.key"))
	if err != nil {
		return fmt.Errorf("%s server: %w", s.Name, err)
	}
	go func() { _ = cw.Start(ctx) }()
	inner, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("%s server: %w", s.Name, err)
	}
	lm := newLimiter(s.Limits)
	ln := &listener{Listener: inner, lm: lm, name: s.Name}
	srv := &http.Server{
		Handler: lm.limit(s.Name, http.MaxBytesHandler(s.Handler, s.MaxRequestBytes)),
		// net/http bounds the TLS handshake by the shortest of these, so the
		// handshake too gets HandshakeTimeout.
		ReadHeaderTimeout: lm.l.HandshakeTimeout,
		ReadTimeout:       max(lm.l.HandshakeTimeout, 15*time.Second),
		WriteTimeout:      max(lm.l.HandshakeTimeout, 60*time.Second),
		IdleTimeout:       10 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
		// A non-nil empty map turns HTTP/2 off.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: cw.GetCertificate,
			NextProtos: []string{"http/1.1"}},
		// net/http logs every failed handshake: a stranger could fill the
		// manager's log; RefusedTotal counts what the limits refuse.
		ErrorLog: log.New(io.Discard, "", 0),
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
	ctrl.LoggerFrom(ctx).Info("Serving "+s.Name+" endpoint", "address", ln.Addr().String(),
		"maxConnections", lm.l.MaxConns, "maxConnectionsPerSource", lm.l.MaxConnsPerSource, "maxConnectionsPerIPv6Prefix", lm.l.MaxConnsPerPrefix)
	if s.Ready != nil {
		s.Ready <- ln.Addr()
	}
	if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s server: %w", s.Name, err)
	}
	<-done
	return nil
}
