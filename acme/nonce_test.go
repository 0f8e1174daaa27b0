// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/noncetest"
)

// fakeClock is a settable clock for nonce expiry.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newNonces(t *testing.T, ttl time.Duration, maxUsed int, now func() time.Time) *acme.MemoryNonces {
	t.Helper()
	n, err := acme.NewMemoryNonces(ttl, maxUsed, now)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func issue(t *testing.T, s acme.NonceStore) string {
	t.Helper()
	n, err := s.Nonce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func redeem(t *testing.T, s acme.NonceStore, n string) bool {
	t.Helper()
	ok, err := s.Redeem(t.Context(), n)
	if err != nil {
		t.Fatalf("Redeem(%q): %v", n, err)
	}
	return ok
}

func TestNewMemoryNoncesArgs(t *testing.T) {
	for _, tt := range []struct {
		ttl     time.Duration
		maxUsed int
	}{{0, 10}, {-time.Second, 10}, {time.Hour, 0}, {time.Hour, -1}} {
		if _, err := acme.NewMemoryNonces(tt.ttl, tt.maxUsed, nil); err == nil {
			t.Errorf("NewMemoryNonces(%v, %d) = nil error; want one", tt.ttl, tt.maxUsed)
		}
	}
}

func TestNonceUnknownAndTampered(t *testing.T) {
	s := newNonces(t, time.Hour, 100, nil)
	other := newNonces(t, time.Hour, 100, nil)
	good := issue(t, s)
	// Flip one character in the middle, where every bit is significant.
	mid := len(good) / 2
	flipped := []byte(good)
	if flipped[mid] == 'A' {
		flipped[mid] = 'B'
	} else {
		flipped[mid] = 'A'
	}
	tests := []struct{ name, nonce string }{
		{"empty", ""},
		{"another store's nonce", issue(t, other)},
		{"tampered", string(flipped)},
		{"truncated", good[:len(good)-1]},
		{"extended", good + "A"},
		{"padded", good + "="},
		{"standard base64 alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(good) + "+/"},
		{"not base64", strings.Repeat("!", len(good))},
		{"right length zeros", strings.Repeat("A", len(good))},
		{"never issued random", "q3iW2d0tq7w7l8Wc3uI1GQ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if redeem(t, s, tt.nonce) {
				t.Errorf("Redeem(%q) = true; want false", tt.nonce)
			}
		})
	}
	// The untouched original still works: failed attempts spend nothing.
	if !redeem(t, s, good) {
		t.Error("Redeem(good) after bad attempts = false; want true")
	}
}

func TestNonceExpiry(t *testing.T) {
	clock := &fakeClock{t: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	const ttl = 10 * time.Minute
	s := newNonces(t, ttl, 100, clock.now)

	atTTL := issue(t, s)
	pastTTL := issue(t, s)
	clock.advance(ttl)
	if !redeem(t, s, atTTL) {
		t.Error("Redeem at exactly ttl = false; want true")
	}
	clock.advance(time.Second)
	if redeem(t, s, pastTTL) {
		t.Error("Redeem one second after ttl = true; want false (expired)")
	}
	fresh := issue(t, s)
	clock.advance(ttl / 2)
	if !redeem(t, s, fresh) {
		t.Error("Redeem of a fresh nonce = false; want true")
	}
}

func TestNonceBound(t *testing.T) {
	const maxUsed = 3
	s := newNonces(t, time.Hour, maxUsed, nil)
	n := make([]string, 10)
	for i := range n {
		n[i] = issue(t, s)
	}
	// Redeem 1..4: the fourth pushes the bound, so the oldest remembered
	// (1) is forgotten and everything at or below it is refused from now
	// on, including 0, which was never redeemed.
	for i := 1; i <= maxUsed+1; i++ {
		if !redeem(t, s, n[i]) {
			t.Fatalf("Redeem(n[%d]) = false; want true", i)
		}
	}
	if redeem(t, s, n[0]) {
		t.Error("Redeem(n[0]) below the floor = true; want false")
	}
	if redeem(t, s, n[1]) {
		t.Error("Redeem(n[1]) forgotten but at the floor = true; want false (no double redeem)")
	}
	for i := 2; i <= maxUsed+1; i++ {
		if redeem(t, s, n[i]) {
			t.Errorf("Redeem(n[%d]) again = true; want false", i)
		}
	}
	// Newer nonces above the floor still work, out of order.
	for _, i := range []int{9, 6, 5, 8, 7} {
		if !redeem(t, s, n[i]) {
			t.Errorf("Redeem(n[%d]) = false; want true", i)
		}
	}
	// Five more redemptions moved the floor up to 6; n[9] is still
	// remembered so it refuses, as does everything below the floor.
	for _, i := range []int{2, 5, 6, 9} {
		if redeem(t, s, n[i]) {
			t.Errorf("Redeem(n[%d]) after floor moved = true; want false", i)
		}
	}
}

// TestMemoryNoncesSuite runs the NonceStore suite that every backend
// passes on the in-process store: each store is its own (not shared), on a
// fake clock.
func TestMemoryNoncesSuite(t *testing.T) {
	clock := &fakeClock{t: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	noncetest.Run(t, noncetest.Config{
		New: func(t *testing.T, lifetime time.Duration) acme.NonceStore {
			return newNonces(t, lifetime, 1<<16, clock.now)
		},
		Elapse: func(_ *testing.T, d time.Duration) { clock.advance(d) },
	})
}
