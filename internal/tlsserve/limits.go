package tlsserve

import (
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits bound what the node-facing endpoints spend on any client, before
// the TLS handshake where they can and always before authentication: the
// endpoints face every workload network, so a stranger there must not be
// able to use up the connections, the CPU or the memory a node needs.
//
// A source is the TCP peer's address, IPv6 included: clouds give a whole
// /64 to a subnet, not to a host (AWS, GCP and Azure alike), so keying by
// /64 would make every node of a subnet one source that a single stranger
// there could use up. A stranger holding many addresses of a /64 (on-prem
// hosts choose their own; prefix delegation) is held by a looser cap on the
// /64's connections together, a quarter of MaxConns by default, so it cannot
// fill the global cap alone. Behind a proxy or load balancer that hides the
// node's address every node is one source: raise the per-source limits
// there.
type Limits struct {
	// MaxConns caps open connections from all sources; a connection over
	// it is closed at once, before its handshake.
	MaxConns int
	// MaxConnsPerSource caps open connections from one source.
	MaxConnsPerSource int
	// MaxConnsPerPrefix caps open connections from the addresses of one
	// IPv6 /64 together; 0 is MaxConns/4.
	MaxConnsPerPrefix int
	// SourceRate and SourceBurst limit the connections and requests one
	// source opens and sends, per second.
	SourceRate  rate.Limit
	SourceBurst int
	// GlobalRate and GlobalBurst limit them for all sources together.
	GlobalRate  rate.Limit
	GlobalBurst int
	// HandshakeTimeout bounds the TLS handshake and the request headers:
	// a client dripping either is dropped.
	HandshakeTimeout time.Duration
}

// DefaultLimits fit a node's traffic (one connection at a time, a handful
// of reports or fetches, retries seconds apart) with room for nodes that
// share an address, and keep 10,000 slow or forged clients from harming
// them (BenchmarkStrangers in controllers/nodereport): about 60 KiB a
// connection, so MaxConns is at most about 64 MiB of buffers.
var DefaultLimits = Limits{
	MaxConns:          1024,
	MaxConnsPerSource: 8,
	SourceRate:        5,
	SourceBurst:       40,
	GlobalRate:        1000,
	GlobalBurst:       2000,
	HandshakeTimeout:  5 * time.Second,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxConns > 0 {
		d.MaxConns = l.MaxConns
	}
	if l.MaxConnsPerSource > 0 {
		d.MaxConnsPerSource = l.MaxConnsPerSource
	}
	if l.SourceRate > 0 {
		d.SourceRate, d.SourceBurst = l.SourceRate, max(l.SourceBurst, 1)
	}
	if l.GlobalRate > 0 {
		d.GlobalRate, d.GlobalBurst = l.GlobalRate, max(l.GlobalBurst, 1)
	}
	if l.HandshakeTimeout > 0 {
		d.HandshakeTimeout = l.HandshakeTimeout
	}
	d.MaxConnsPerPrefix = l.MaxConnsPerPrefix
	if d.MaxConnsPerPrefix <= 0 {
		d.MaxConnsPerPrefix = max(d.MaxConns/4, 1)
	}
	return d
}

// maxSources bounds the per-source table. Only sources with an open
// connection or a bucket not yet refilled need an entry; others are
// dropped when the table is full, so it cannot grow with the number of
// addresses an attacker holds.
const maxSources = 1 << 16

// limiter keeps the per-source and global state of one server.
type limiter struct {
	l      Limits
	global *rate.Limiter
	now    func() time.Time

	mu      sync.Mutex
	conns   int
	sources map[netip.Addr]*source
	// prefixes counts the open connections of each IPv6 /64 that has one.
	prefixes map[netip.Prefix]int
}

type source struct {
	conns  int
	bucket *rate.Limiter
}

func newLimiter(l Limits) *limiter {
	l = l.withDefaults()
	return &limiter{l: l, global: rate.NewLimiter(l.GlobalRate, l.GlobalBurst), now: time.Now, sources: map[netip.Addr]*source{}, prefixes: map[netip.Prefix]int{}}
}

// prefixOf is an IPv6 address's /64; ok is false for IPv4.
func prefixOf(a netip.Addr) (netip.Prefix, bool) {
	if !a.Is6() {
		return netip.Prefix{}, false
	}
	p, err := a.Prefix(64)
	return p, err == nil
}

// sourceOf keys a peer by its address (an IPv4-mapped IPv6 address as the
// IPv4 address it is; an IPv6 zone does not make another source).
func sourceOf(addr string) netip.Addr {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap().WithZone("")
}

// get returns key's entry, making room for it if need be; mu is held.
func (lm *limiter) get(key netip.Addr, now time.Time) *source {
	if s, ok := lm.sources[key]; ok {
		return s
	}
	if len(lm.sources) >= maxSources {
		// An idle entry with a full bucket is the same as none; failing
		// those, any idle entry goes (its source gets a fresh bucket).
		for k, s := range lm.sources {
			if s.conns == 0 && s.bucket.TokensAt(now) >= float64(lm.l.SourceBurst) {
				delete(lm.sources, k)
			}
		}
		for k, s := range lm.sources {
			if len(lm.sources) < maxSources*3/4 {
				break
			}
			if s.conns == 0 {
				delete(lm.sources, k)
			}
		}
	}
	s := &source{bucket: rate.NewLimiter(lm.l.SourceRate, lm.l.SourceBurst)}
	lm.sources[key] = s
	return s
}

// Reasons a connection or request is refused, for RefusedTotal.
const (
	reasonConns       = "connections"
	reasonSourceConns = "source_connections"
	reasonPrefixConns = "prefix_connections"
	reasonSourceRate  = "source_rate"
	reasonGlobalRate  = "global_rate"
)

// open admits a new connection from addr, or says why not.
func (lm *limiter) open(addr string) (netip.Addr, string) {
	key := sourceOf(addr)
	now := lm.now()
	lm.mu.Lock()
	defer lm.mu.Unlock()
	if lm.conns >= lm.l.MaxConns {
		return key, reasonConns
	}
	s := lm.get(key, now)
	prefix, v6 := prefixOf(key)
	switch {
	case s.conns >= lm.l.MaxConnsPerSource:
		return key, reasonSourceConns
	case v6 && lm.prefixes[prefix] >= lm.l.MaxConnsPerPrefix:
		return key, reasonPrefixConns
	case !s.bucket.AllowN(now, 1):
		return key, reasonSourceRate
	case !lm.global.AllowN(now, 1):
		return key, reasonGlobalRate
	}
	s.conns++
	lm.conns++
	if v6 {
		lm.prefixes[prefix]++
	}
	return key, ""
}

func (lm *limiter) close(key netip.Addr) {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	lm.conns--
	if s, ok := lm.sources[key]; ok && s.conns > 0 {
		s.conns--
	}
	if prefix, v6 := prefixOf(key); v6 {
		if lm.prefixes[prefix]--; lm.prefixes[prefix] <= 0 {
			delete(lm.prefixes, prefix)
		}
	}
}

// request admits one request from addr, or says why not.
func (lm *limiter) request(addr string) string {
	key := sourceOf(addr)
	now := lm.now()
	lm.mu.Lock()
	defer lm.mu.Unlock()
	if !lm.get(key, now).bucket.AllowN(now, 1) {
		return reasonSourceRate
	}
	if !lm.global.AllowN(now, 1) {
		return reasonGlobalRate
	}
	return ""
}

// listener closes a connection over the limits as soon as it is accepted:
// no handshake, no buffers, no goroutine.
type listener struct {
	net.Listener
	lm   *limiter
	name string
}

func (ln *listener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, refused := ln.lm.open(c.RemoteAddr().String())
		if refused != "" {
			RefusedTotal.WithLabelValues(ln.name, refused).Inc()
			_ = c.Close()
			continue
		}
		return &conn{Conn: c, release: func() { ln.lm.close(key) }}, nil
	}
}

type conn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// limit answers 429 to a request over the source's or the global rate,
// before the handler (and its authentication) sees it.
func (lm *limiter) limit(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refused := lm.request(r.RemoteAddr); refused != "" {
			RefusedTotal.WithLabelValues(name, refused).Inc()
			w.Header().Set("Retry-After", "5")
			w.Header().Set("Connection", "close")
			http.Error(w, "too many requests", http.StatusTooManyRequests)
			return
		}
		h.ServeHTTP(w, r)
	})
}
