// SPDX-License-Identifier: Apache-2.0

// Package noncetest is the behaviour suite every acme.NonceStore must pass:
// the in-process acme.MemoryNonces, and the shared stores that let several
// weir replicas redeem each other's nonces (storage/redis, and the
// PostgreSQL store's). Call Run from the backend's own test.
package noncetest

import (
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// Config describes the backend under test.
type Config struct {
	// New returns a NonceStore whose nonces live for lifetime. Called
	// twice in one test, it returns two stores as two replicas would have
	// them: on one shared backend when Shared is set. Whatever it opens it
	// closes with t.Cleanup.
	New func(t *testing.T, lifetime time.Duration) acme.NonceStore
	// Shared says that the stores New returns in one test share their
	// nonces: a nonce issued by one redeems, once, on any of them. An
	// in-process store (acme.MemoryNonces) is not shared.
	Shared bool
	// Elapse makes d pass for the stores New returned in t: it advances
	// their fake clock, or sleeps when the backend keeps time itself (a
	// Redis key's expiry).
	Elapse func(t *testing.T, d time.Duration)
	// Lifetime is the nonce lifetime of the expiry test; 0 means one
	// minute. A backend on a real clock wants it short, but long enough
	// that half of it covers a round trip on a loaded machine (a second).
	Lifetime time.Duration
}

// Run runs the suite.
func Run(t *testing.T, c Config) {
	if c.New == nil || c.Elapse == nil {
		t.Fatal("noncetest: Config.New and Config.Elapse are required")
	}
	if c.Lifetime <= 0 {
		c.Lifetime = time.Minute
	}
	t.Run("Format", func(t *testing.T) { testFormat(t, c) })
	t.Run("SingleUse", func(t *testing.T) { testSingleUse(t, c) })
	t.Run("Unknown", func(t *testing.T) { testUnknown(t, c) })
	t.Run("Expiry", func(t *testing.T) { testExpiry(t, c) })
	t.Run("ConcurrentIssue", func(t *testing.T) { testConcurrentIssue(t, c) })
	for _, n := range []int{2, 16} {
		t.Run(fmt.Sprintf("ConcurrentRedeem%d", n), func(t *testing.T) { testConcurrentRedeem(t, c, n) })
	}
	if c.Shared {
		t.Run("CrossStore", func(t *testing.T) { testCrossStore(t, c) })
	}
}

// hour is the lifetime of the tests that are not about expiry.
const hour = time.Hour

func issue(t *testing.T, s acme.NonceStore) string {
	t.Helper()
	n, err := s.Nonce(t.Context())
	if err != nil {
		t.Fatalf("Nonce: %v", err)
	}
	return n
}

func redeem(t *testing.T, s acme.NonceStore, n string) bool {
	t.Helper()
	ok, err := s.Redeem(t.Context(), n)
	if err != nil {
		t.Fatalf("Redeem(%.40q): %v", n, err)
	}
	return ok
}

// testFormat: RFC 8555 §6.5.1 wants unpadded base64url; weir's nonces carry
// at least 128 bits, and no two are alike.
func testFormat(t *testing.T, c Config) {
	s := c.New(t, hour)
	seen := make(map[string]bool)
	for range 500 {
		n := issue(t, s)
		if seen[n] {
			t.Fatalf("nonce %q issued twice", n)
		}
		seen[n] = true
		b, err := base64.RawURLEncoding.DecodeString(n)
		if err != nil || strings.ContainsAny(n, "=+/") {
			t.Fatalf("nonce %q is not unpadded base64url", n)
		}
		if len(b) < 16 {
			t.Fatalf("nonce %q holds %d bytes, want at least 16", n, len(b))
		}
	}
}

// testSingleUse: each nonce redeems true exactly once, in any order.
func testSingleUse(t *testing.T, c Config) {
	s := c.New(t, hour)
	ns := make([]string, 10)
	for i := range ns {
		ns[i] = issue(t, s)
	}
	for _, i := range []int{5, 0, 9, 3, 1} {
		if !redeem(t, s, ns[i]) {
			t.Errorf("first Redeem(nonce %d) = false, want true", i)
		}
		if redeem(t, s, ns[i]) {
			t.Errorf("second Redeem(nonce %d) = true, want false", i)
		}
	}
}

// testUnknown: what was never issued, or was altered, is refused without
// an error, and refusing it spends nothing.
func testUnknown(t *testing.T, c Config) {
	s := c.New(t, hour)
	good := issue(t, s)
	flipped := []byte(good)
	mid := len(flipped) / 2
	if flipped[mid] == 'A' {
		flipped[mid] = 'B'
	} else {
		flipped[mid] = 'A'
	}
	for _, tc := range []struct{ name, nonce string }{
		{"empty", ""},
		{"altered", string(flipped)},
		{"truncated", good[:len(good)-1]},
		{"extended", good + "A"},
		{"padded", good + "="},
		{"standard alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(good) + "+/"},
		{"not base64", strings.Repeat("!", len(good))},
		{"never issued", "q3iW2d0tq7w7l8Wc3uI1GQ"},
		{"zeros", strings.Repeat("A", len(good))},
		{"braces", "{weir}" + good},
		{"long", strings.Repeat("A", 10000)},
		{"glob", "*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if redeem(t, s, tc.nonce) {
				t.Errorf("Redeem(%.40q) = true, want false", tc.nonce)
			}
		})
	}
	if !redeem(t, s, good) {
		t.Error("Redeem of the untouched nonce after the refusals = false, want true")
	}
}

// testExpiry: a nonce redeems within its lifetime and not after it.
func testExpiry(t *testing.T, c Config) {
	s := c.New(t, c.Lifetime)
	within, late := issue(t, s), issue(t, s)
	c.Elapse(t, c.Lifetime/2)
	if !redeem(t, s, within) {
		t.Errorf("Redeem after half the lifetime (%v) = false, want true", c.Lifetime/2)
	}
	c.Elapse(t, c.Lifetime+c.Lifetime/2)
	if redeem(t, s, late) {
		t.Errorf("Redeem after twice the lifetime (%v) = true, want false", 2*c.Lifetime)
	}
	if fresh := issue(t, s); !redeem(t, s, fresh) {
		t.Error("Redeem of a nonce issued after the others expired = false, want true")
	}
}

// testConcurrentIssue: nonces issued concurrently are distinct, and each
// redeems.
func testConcurrentIssue(t *testing.T, c Config) {
	s := c.New(t, hour)
	var (
		mu   sync.Mutex
		seen = make(map[string]bool)
		wg   sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for range 100 {
				n, err := s.Nonce(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[n] {
					t.Errorf("nonce %q issued twice", n)
				}
				seen[n] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for n := range seen {
		if !redeem(t, s, n) {
			t.Fatalf("Redeem(%q) = false, want true", n)
		}
	}
}

// testConcurrentRedeem: n goroutines race to redeem one nonce, 50 times;
// exactly one wins each race. With a shared backend they redeem through
// two stores, as two replicas would.
func testConcurrentRedeem(t *testing.T, c Config, n int) {
	stores := []acme.NonceStore{c.New(t, hour)}
	if c.Shared {
		stores = append(stores, c.New(t, hour))
	}
	for trial := range 50 {
		nonce := issue(t, stores[trial%len(stores)])
		var (
			wg    sync.WaitGroup
			wins  atomic.Int32
			start = make(chan struct{})
		)
		for g := range n {
			s := stores[g%len(stores)]
			wg.Go(func() {
				<-start
				ok, err := s.Redeem(t.Context(), nonce)
				if err != nil {
					t.Error(err)
				}
				if ok {
					wins.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if got := wins.Load(); got != 1 {
			t.Fatalf("trial %d: %d of %d concurrent redemptions succeeded, want exactly 1", trial, got, n)
		}
	}
}

// testCrossStore: a nonce issued by one replica redeems on another, once.
func testCrossStore(t *testing.T, c Config) {
	a, b := c.New(t, hour), c.New(t, hour)
	n := issue(t, a)
	if !redeem(t, b, n) {
		t.Fatal("a nonce issued by store A: Redeem on store B = false, want true")
	}
	if redeem(t, a, n) || redeem(t, b, n) {
		t.Error("a nonce redeemed on store B redeems again, want false on A and B")
	}
	m := issue(t, b)
	if !redeem(t, a, m) {
		t.Error("a nonce issued by store B: Redeem on store A = false, want true")
	}
}
