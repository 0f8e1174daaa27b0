// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"net/netip"
	"testing"
	"time"
)

func newTestEdge(t *testing.T, entries int) *Edge {
	t.Helper()
	e, err := NewEdge(DefaultPolicy().Limits[Global], entries)
	if err != nil {
		t.Fatalf("NewEdge: %v", err)
	}
	return e
}

// TestEdgeAllow: 200 per minute, burst 20: T = 300 ms.
func TestEdgeAllow(t *testing.T) {
	e := newTestEdge(t, 1<<12)
	const now = int64(1_767_225_600_000_000)
	ip := netip.MustParseAddr("192.0.2.7")
	for i := range 20 {
		if ok, _ := e.Allow(ip, now); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	tests := []struct {
		name      string
		at        int64
		wantOK    bool
		wantRetry time.Duration
	}{
		{"21st at once", now, false, 300 * time.Millisecond},
		{"1 µs early", now + 299_999, false, time.Microsecond},
		{"exactly at retryAfter", now + 300_000, true, 0},
		{"next one waits a full interval", now + 300_000, false, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		ok, retry := e.Allow(ip, tt.at)
		if ok != tt.wantOK || retry != tt.wantRetry {
			t.Errorf("%s: Allow = %v, %v; want %v, %v", tt.name, ok, retry, tt.wantOK, tt.wantRetry)
		}
	}
}

// TestEdgeKeys: a /64 shares one bucket, an IPv4-mapped address is its IPv4
// address, and different /64s and IPv4 addresses are independent.
func TestEdgeKeys(t *testing.T) {
	e := newTestEdge(t, 1<<12)
	const now = int64(1_000_000_000_000)
	drain := func(addr string) {
		for range 20 {
			e.Allow(netip.MustParseAddr(addr), now)
		}
	}
	tests := []struct {
		drained, asked string
		wantOK         bool
	}{
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", false},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", true},
		{"198.51.100.1", "::ffff:198.51.100.1", false},
		{"198.51.100.2", "198.51.100.3", true},
		{"fe80::1%eth0", "fe80::2%eth1", false},
	}
	for _, tt := range tests {
		drain(tt.drained)
		if ok, _ := e.Allow(netip.MustParseAddr(tt.asked), now); ok != tt.wantOK {
			t.Errorf("after draining %s, Allow(%s) = %v, want %v", tt.drained, tt.asked, ok, tt.wantOK)
		}
	}
}

// sameSet returns n addresses that land in the same set of e.
func sameSet(t *testing.T, e *Edge, n int) []netip.Addr {
	t.Helper()
	var out []netip.Addr
	var want uint64
	for i := 0; len(out) < n && i < 1<<20; i++ {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		h := e.hash(edgeKey(a))
		if len(out) == 0 {
			want = h
		}
		if h%edgeShards == want%edgeShards && (h/edgeShards)&e.setMask == (want/edgeShards)&e.setMask {
			out = append(out, a)
		}
	}
	if len(out) < n {
		t.Fatalf("found only %d addresses in one set", len(out))
	}
	return out
}

// TestEdgeEviction: a full set gives a new address the stale slot if there
// is one, and otherwise the active bucket nearest to full; memory never
// grows.
func TestEdgeEviction(t *testing.T) {
	e := newTestEdge(t, 1) // the minimum: one set of 8 per shard
	const T = 300_000
	now := int64(1_000_000_000_000)
	addrs := sameSet(t, e, edgeWays+2)
	// Slot i spends i+1 tokens, so addrs[0] has the earliest TAT.
	for i, a := range addrs[:edgeWays] {
		for range i + 1 {
			e.Allow(a, now)
		}
	}
	// Let addrs[0]'s single token refill: it is stale.
	now += T
	for range 3 {
		if ok, _ := e.Allow(addrs[edgeWays], now); !ok {
			t.Fatal("new address refused")
		}
	}
	// addrs[0] was evicted (it was full anyway); the rest kept their state:
	// addrs[7] spent 8 and has 12 + 1 refilled left.
	if got := allowedAtOnce(e, addrs[7], now); got != 13 {
		t.Errorf("addrs[7] after an eviction elsewhere: %d allowed, want 13", got)
	}
	// All 8 slots are active now; the one nearest to full is addrs[1]
	// (spent 2, 1 refilled), which a new address evicts.
	if ok, _ := e.Allow(addrs[edgeWays+1], now); !ok {
		t.Fatal("new address refused with a full set")
	}
	if got := allowedAtOnce(e, addrs[1], now); got != 20 {
		t.Errorf("evicted addrs[1]: %d allowed, want a fresh burst of 20", got)
	}
	if got := allowedAtOnce(e, addrs[6], now); got != 14 {
		t.Errorf("addrs[6] (spent 7, 1 refilled): %d allowed, want 14", got)
	}
	for i := range e.shards {
		if got := len(e.shards[i].slots); got != edgeWays {
			t.Fatalf("shard %d has %d slots, want %d: the table must not grow", i, got, edgeWays)
		}
	}
}

// allowedAtOnce drains addr at now and returns how many were allowed.
func allowedAtOnce(e *Edge, addr netip.Addr, now int64) int {
	n := 0
	for range 100 {
		if ok, _ := e.Allow(addr, now); ok {
			n++
		}
	}
	return n
}

func TestNewEdgeErrors(t *testing.T) {
	tests := map[string]struct {
		limit   Limit
		entries int
	}{
		"count limit":  {Limit{Max: 5}, 100},
		"zero burst":   {Limit{Count: 1, Period: time.Second}, 100},
		"zero entries": {Limit{Count: 1, Period: time.Second, Burst: 1}, 0},
		"huge table":   {Limit{Count: 1, Period: time.Second, Burst: 1}, 1 << 30},
	}
	for name, tt := range tests {
		if _, err := NewEdge(tt.limit, tt.entries); err == nil {
			t.Errorf("%s: NewEdge = nil error", name)
		}
	}
	e := newTestEdge(t, 65536)
	if got, want := len(e.shards[0].slots)*edgeShards, 65536; got != want {
		t.Errorf("65536 entries: %d slots, want %d", got, want)
	}
}

func TestEdgeAllowAllocs(t *testing.T) {
	e := newTestEdge(t, 1<<12)
	addr := netip.MustParseAddr("2001:db8::1")
	now := int64(1_000_000_000_000)
	if n := testing.AllocsPerRun(1000, func() { e.Allow(addr, now); now++ }); n != 0 {
		t.Errorf("Allow allocates %v times per call, want 0", n)
	}
}
