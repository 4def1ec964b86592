package tlsserve

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// TestLimiter: the global and per-source connection caps, the per-source
// rate shared by connections and requests, and a closed connection giving
// its place back.
func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	lm := newLimiter(Limits{MaxConns: 3, MaxConnsPerSource: 2, MaxConnsPerPrefix: 3, SourceRate: 1, SourceBurst: 3, GlobalRate: 100, GlobalBurst: 100})
	lm.now = func() time.Time { return now }
	a1, r := lm.open("10.0.0.1:1000")
	if r != "" {
		t.Fatal(r)
	}
	if _, r = lm.open("10.0.0.1:1001"); r != "" {
		t.Fatal(r)
	}
	if _, r = lm.open("10.0.0.1:1002"); r != reasonSourceConns {
		t.Fatalf("third connection of a source: %q", r)
	}
	if _, r = lm.open("[2001:db8::1]:1"); r != "" {
		t.Fatal(r)
	}
	if _, r = lm.open("[2001:db8::2]:1"); r != reasonConns {
		t.Fatalf("over MaxConns: %q", r)
	}
	lm.close(a1)
	if _, r = lm.open("[2001:db8::ffff]:2"); r != "" {
		t.Fatalf("a closed connection's place: %q", r)
	}
	if _, r = lm.open("[2001:db8::3]:3"); r != reasonConns {
		t.Fatalf("over MaxConns: %q", r)
	}
	// 10.0.0.1 spent 2 of its burst of 3 on connections (the refused one
	// took nothing).
	if r = lm.request("10.0.0.1:1000"); r != "" {
		t.Fatalf("the burst's last token: %q", r)
	}
	if r = lm.request("10.0.0.1:1000"); r != reasonSourceRate {
		t.Fatalf("requests share the source's bucket: %q", r)
	}
	now = now.Add(time.Second)
	if r = lm.request("10.0.0.1:1000"); r != "" {
		t.Fatalf("after a second: %q", r)
	}
}

// TestLimiterIPv6Neighbours: clouds give a subnet, not a host, an IPv6 /64,
// so a stranger holding its source's connections in a node subnet must not
// refuse the nodes beside it. An IPv4-mapped address is the IPv4 source
// and a zone makes no other source.
func TestLimiterIPv6Neighbours(t *testing.T) {
	lm := newLimiter(Limits{MaxConns: 100, MaxConnsPerSource: 2})
	for _, c := range []struct{ addr, want, why string }{
		{"[2001:db8:0:1::bad]:1", "", "a stranger's first connection"},
		{"[2001:db8:0:1::bad]:2", "", "its second"},
		{"[2001:db8:0:1::bad]:3", reasonSourceConns, "its third, over its source's cap"},
		{"[2001:db8:0:1::a:1]:1", "", "a node in the stranger's /64"},
		{"[fe80::1%eth0]:1", "", "a link-local address"},
		{"[fe80::1%eth1]:1", "", "the same on another interface"},
		{"[fe80::1]:1", reasonSourceConns, "the same without a zone: no other source"},
		{"10.0.0.7:1", "", "an IPv4 address"},
		{"10.0.0.7:2", "", "its second connection"},
		{"[::ffff:10.0.0.7]:3", reasonSourceConns, "the IPv4 address mapped: no other source"},
	} {
		if _, r := lm.open(c.addr); r != c.want {
			t.Errorf("%s (%s): refused %q, want %q", c.addr, c.why, r, c.want)
		}
	}
}

// TestLimiterIPv6PrefixCap: a stranger spreading its connections over many
// addresses of one /64 is held to MaxConnsPerPrefix together, and the nodes
// of another /64 and of IPv4 still get in; a closed connection gives its
// place back.
func TestLimiterIPv6PrefixCap(t *testing.T) {
	lm := newLimiter(Limits{MaxConns: 100, MaxConnsPerSource: 2, MaxConnsPerPrefix: 10, SourceRate: 100, SourceBurst: 100, GlobalRate: 1000, GlobalBurst: 1000})
	var first netip.Addr
	for i := range 10 {
		key, r := lm.open(fmt.Sprintf("[2001:db8:0:1::%x]:1", i+1))
		if r != "" {
			t.Fatalf("connection %d of the /64: %q", i+1, r)
		}
		if i == 0 {
			first = key
		}
	}
	if _, r := lm.open("[2001:db8:0:1::ffff]:1"); r != reasonPrefixConns {
		t.Fatalf("the /64's 11th connection, from a new address: %q", r)
	}
	if _, r := lm.open("[2001:db8:0:2::1]:1"); r != "" {
		t.Fatalf("another /64: %q", r)
	}
	if _, r := lm.open("10.0.0.1:1"); r != "" {
		t.Fatalf("IPv4: %q", r)
	}
	lm.close(first)
	if _, r := lm.open("[2001:db8:0:1::ffff]:2"); r != "" {
		t.Fatalf("after a close: %q", r)
	}
	if d := newLimiter(Limits{MaxConns: 1024}).l.MaxConnsPerPrefix; d != 256 {
		t.Fatalf("default MaxConnsPerPrefix %d, want MaxConns/4", d)
	}
}

// TestLimiterBounded: the per-source table does not grow with the number
// of addresses that ever connected.
func TestLimiterBounded(t *testing.T) {
	lm := newLimiter(Limits{})
	for i := range maxSources + 1000 {
		_ = lm.request(fmt.Sprintf("10.%d.%d.%d:1", i>>16&0xff, i>>8&0xff, i&0xff))
	}
	if n := len(lm.sources); n > maxSources {
		t.Fatalf("%d sources kept, max %d", n, maxSources)
	}
}
