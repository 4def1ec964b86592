package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// CA is a fresh certificate authority for the servers the node-side
// scripts talk to in tests: curl and wget verify against its PEM, so a test
// can tell "trusted through the bundle" from "trusted through the system".
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate, as a node's CA bundle carries it.
	PEM []byte
}

// NewCA makes a CA valid for a day (ECDSA P-256).
func NewCA(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	serial := big.NewInt(now.UnixNano())
	// A name of its own: OpenSSL looks issuers up by name, so two test CAs
	// of one name would hide each other.
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "nodeboot-test-node-ca-" + serial.String()},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// StartTLS starts an HTTPS server on addr ("127.0.0.2:0"; empty is
// 127.0.0.1) with a certificate this CA signed for the listening address,
// 127.0.0.1 and localhost. It is closed when the test ends.
func (ca *CA) StartTLS(t testing.TB, h http.Handler, addr string) *httptest.Server {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ip := ln.Addr().(*net.TCPAddr).IP
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), ip},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// DripListener accepts TCP connections on 127.0.0.1 and answers each with
// the header of a 16 KiB TLS handshake record, then one byte of it every
// 200 ms: a server that never completes a handshake but never goes quiet
// long enough for a read timeout either. It returns host:port; the
// connections are closed when the test ends.
func DripListener(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		done  = make(chan struct{})
	)
	t.Cleanup(func() {
		close(done)
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				if _, err := c.Write([]byte{0x16, 0x03, 0x03, 0x40, 0x00}); err != nil {
					return
				}
				tick := time.NewTicker(200 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-done:
						return
					case <-tick.C:
						if _, err := c.Write([]byte{0}); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// SystemTrust returns a command prefix and environment under which caPEM
// is everything the machine's system store trusts: in a private mount
// namespace /etc/ssl/certs is replaced by a directory holding only that CA
// (as ca-certificates.crt and under its OpenSSL hash name), and
// SSL_CERT_FILE, SSL_CERT_DIR and CURL_CA_BUNDLE point there too. A tool
// that trusts the system store besides the bundle it is given trusts caPEM.
// It needs root, unshare and openssl.
func SystemTrust(t testing.TB, caPEM []byte) (prefix, env []string) {
	t.Helper()
	RequireRoot(t)
	tools := map[string]string{}
	for _, tool := range []string{"unshare", "openssl", "mount"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s is needed on the test machine: %v", tool, err)
		}
		tools[tool] = p
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(dir, "ca-certificates.crt")
	if err := os.WriteFile(bundle, caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tools["openssl"], "rehash", dir).CombinedOutput(); err != nil {
		t.Fatalf("openssl rehash: %v\n%s", err, out)
	}
	// The command runs with the node's PATH, which may lack mount.
	prefix = []string{tools["unshare"], "--mount", "--propagation", "private", "/bin/sh", "-c",
		tools["mount"] + ` --bind "$0" /etc/ssl/certs && exec "$@"`, dir}
	return prefix, []string{"SSL_CERT_FILE=" + bundle, "SSL_CERT_DIR=" + dir, "CURL_CA_BUNDLE=" + bundle}
}
