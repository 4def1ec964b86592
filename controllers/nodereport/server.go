package nodereport

import (
	"context"
	"net/http"

	"github.com/nodeboot/nodeboot/internal/tlsserve"
)

// Server runs a Handler over TLS with the certificate in CertDir (tls.crt,
// tls.key; reloaded when cert-manager renews them), on every manager
// replica: a report needs no leader.
type Server struct {
	Addr    string
	CertDir string
	Handler http.Handler
}

// NeedLeaderElection is false: any replica can take a node's report.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	srv := &tlsserve.Server{Name: "bootstrap report", Addr: s.Addr, CertDir: s.CertDir, Handler: s.Handler, MaxRequestBytes: MaxBody + 1}
	return srv.Start(ctx)
}
