package tlsserve

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// start serves h on 127.0.0.1 and returns the address and a client that
// trusts the server and dials from source (a loopback address).
func start(t *testing.T, h http.Handler) (string, func(source string) *http.Client) {
	t.Helper()
	dir := t.TempDir()
	ca := testenv.ServingCertificate(t, dir)
	ready := make(chan net.Addr, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- (&Server{Name: "test", Addr: "127.0.0.1:0", CertDir: dir, Handler: h, MaxRequestBytes: 1 << 10, Ready: ready}).Start(ctx)
	}()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return addr.String(), func(source string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}, Timeout: 5 * time.Second}
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			DialContext:       d.DialContext,
			TLSClientConfig:   &tls.Config{RootCAs: pool, NextProtos: []string{"h2", "http/1.1"}},
			ForceAttemptHTTP2: true,
		}}
	}
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })

// TestNoHTTP2: a client offering h2 gets HTTP/1.1: streams would multiply
// what one admitted connection can ask of the server.
func TestNoHTTP2(t *testing.T) {
	t.Parallel()
	addr, client := start(t, ok)
	resp, err := client("127.0.0.1").Get("https://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.Proto != "HTTP/1.1" {
		t.Fatalf("negotiated %s", resp.Proto)
	}
}

// TestSourceConnectionCap: one source cannot hold more than
// MaxConnsPerSource connections (the rest are closed before any
// handshake), and another source still gets served meanwhile.
func TestSourceConnectionCap(t *testing.T) {
	t.Parallel()
	addr, client := start(t, ok)
	extra := 4
	var conns []net.Conn
	for range DefaultLimits.MaxConnsPerSource + extra {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.3")}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	closed := 0
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		var ne net.Error
		if _, err := c.Read(make([]byte, 1)); err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
			closed++
		}
	}
	if closed != extra {
		t.Fatalf("%d of %d connections from one source were closed, want %d", closed, len(conns), extra)
	}
	resp, err := client("127.0.0.4").Get("https://" + addr + "/")
	if err != nil {
		t.Fatalf("another source: %v", err)
	}
	_ = resp.Body.Close()
}

// TestSourceRate: a source sending faster than its rate gets 429 with
// Retry-After (or, for a new connection, is closed at accept) before the
// handler runs; another source is not affected.
func TestSourceRate(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	addr, client := start(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	c := client("127.0.0.5")
	limited, sent := 0, DefaultLimits.SourceBurst+20
	for range sent {
		resp, err := c.Get("https://" + addr + "/")
		if err != nil {
			// A new connection over the rate is closed at accept.
			limited++
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			limited++
			if resp.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
		}
	}
	if limited == 0 || int(calls.Load())+limited != sent {
		t.Fatalf("%d of %d requests limited, %d reached the handler", limited, sent, calls.Load())
	}
	resp, err := client("127.0.0.6").Get("https://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("another source got %d", resp.StatusCode)
	}
}

// TestSlowHandshakeDropped: a connection that never completes its TLS
// handshake is closed after HandshakeTimeout, not held.
func TestSlowHandshakeDropped(t *testing.T) {
	t.Parallel()
	addr, _ := start(t, ok)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Half a ClientHello record header, then nothing.
	if _, err := c.Write([]byte{0x16, 0x03}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(DefaultLimits.HandshakeTimeout + 2*time.Second))
	_, err = io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("still open after %s", time.Since(start).Round(time.Second))
	}
	t.Logf("closed after %s", time.Since(start).Round(100*time.Millisecond))
}
