// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/noncetest"
)

// newNonces returns the nonces of s with a one-hour lifetime.
func newNonces(t *testing.T, s *Store) *Nonces {
	t.Helper()
	n, err := NewNonces(NonceConfig{Lifetime: time.Hour}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNonces(t *testing.T) {
	_, dsn := freshSchema(t)
	// Two stores on one schema: two replicas.
	a, b := newNonces(t, openDSN(t, dsn)), newNonces(t, openDSN(t, dsn))
	ctx := t.Context()

	n, err := a.Nonce(ctx)
	if err != nil {
		t.Fatalf("Nonce: %v", err)
	}
	if len(n) < 22 {
		t.Errorf("nonce %q has %d characters, want at least 22 (16 bytes)", n, len(n))
	}
	other, err := a.Nonce(ctx)
	if err != nil || other == n {
		t.Fatalf("second Nonce = %q, %v; want a different one", other, err)
	}
	tests := []struct {
		name  string
		store *Nonces
		nonce string
		want  bool
	}{
		{"issued by A, redeemed on B", b, n, true},
		{"again on A", a, n, false},
		{"again on B", b, n, false},
		{"the other, on A", a, other, true},
		{"unknown", a, "AAAAAAAAAAAAAAAAAAAAAA", false},
		{"malformed", a, "not a nonce!", false},
		{"not UTF-8", a, "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5", false},
		{"empty", b, "", false},
	}
	for _, tt := range tests {
		got, err := tt.store.Redeem(ctx, tt.nonce)
		if err != nil || got != tt.want {
			t.Errorf("%s: Redeem(%q) = %v, %v; want %v, nil", tt.name, tt.nonce, got, err, tt.want)
		}
	}
}

// TestNonceConcurrentRedeem: of many concurrent redemptions of one nonce,
// over two replicas, exactly one succeeds.
func TestNonceConcurrentRedeem(t *testing.T) {
	const n = 32
	_, dsn := freshSchema(t)
	replicas := []*Nonces{newNonces(t, openDSN(t, dsn)), newNonces(t, openDSN(t, dsn))}
	ctx := t.Context()
	for round := range 5 {
		nonce, err := replicas[round%2].Nonce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		results := make([]bool, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				results[i], errs[i] = replicas[i%2].Redeem(ctx, nonce)
			})
		}
		close(start)
		wg.Wait()
		wins := 0
		for i := range n {
			if errs[i] != nil {
				t.Errorf("round %d: Redeem %d: %v", round, i, errs[i])
			}
			if results[i] {
				wins++
			}
		}
		if wins != 1 {
			t.Errorf("round %d: %d of %d concurrent redemptions succeeded, want exactly 1", round, wins, n)
		}
	}
}

// TestNonceExpiry: an expired nonce does not redeem, and the sweep
// deletes expired nonces only.
func TestNonceExpiry(t *testing.T) {
	s := openFresh(t)
	nonces := newNonces(t, s)
	ctx := t.Context()
	var expired []string
	for range 3 {
		v, err := nonces.Nonce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		expired = append(expired, v)
	}
	fresh, err := nonces.Nonce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Expire them on the server's clock, which is the one that counts.
	if _, err := s.pool.Exec(ctx, `UPDATE nonces SET expires = now() - interval '1 second' WHERE value = ANY($1)`, expired); err != nil {
		t.Fatal(err)
	}
	if ok, err := nonces.Redeem(ctx, expired[0]); err != nil || ok {
		t.Errorf("Redeem(expired) = %v, %v; want false, nil", ok, err)
	}
	swept, err := nonces.Sweep(ctx)
	if err != nil || swept != 3 {
		t.Errorf("Sweep = %d, %v; want 3, nil", swept, err)
	}
	if swept, err := nonces.Sweep(ctx); err != nil || swept != 0 {
		t.Errorf("second Sweep = %d, %v; want 0, nil", swept, err)
	}
	if ok, err := nonces.Redeem(ctx, fresh); err != nil || !ok {
		t.Errorf("Redeem(fresh, after the sweep) = %v, %v; want true, nil", ok, err)
	}

	// A short lifetime really expires.
	short, err := NewNonces(NonceConfig{Lifetime: 50 * time.Millisecond}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := short.Nonce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if ok, err := short.Redeem(ctx, v); err != nil || ok {
		t.Errorf("Redeem(after its lifetime) = %v, %v; want false, nil", ok, err)
	}
}

// TestNonceRun: Run sweeps on its interval and returns when ctx ends.
func TestNonceRun(t *testing.T) {
	s := openFresh(t)
	nonces, err := NewNonces(NonceConfig{Lifetime: time.Millisecond, SweepInterval: 20 * time.Millisecond}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nonces.Nonce(t.Context()); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(t.Context())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- nonces.Run(runCtx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left int
		if err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM nonces`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d expired nonces left 10 s after Run started", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

func TestNonceConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  NonceConfig
		want bool // valid
	}{
		{NonceConfig{Lifetime: time.Hour}, true},
		{NonceConfig{Lifetime: time.Hour, SweepInterval: time.Second}, true},
		{NonceConfig{}, false},
		{NonceConfig{Lifetime: time.Hour, SweepInterval: -1}, false},
	}
	for _, tt := range tests {
		if got := tt.cfg.Validate() == nil; got != tt.want {
			t.Errorf("%+v.Validate() valid = %v, want %v", tt.cfg, got, tt.want)
		}
	}
}

// TestNonceStoreSuite runs the NonceStore suite on PostgreSQL: the stores
// of a test are two pools on one schema, as replicas share one database,
// and expiry is the server's clock.
func TestNonceStoreSuite(t *testing.T) {
	baseDSN(t)           // skip once, not in every sub-test
	var schemas sync.Map // a test of the suite -> the DSN of its schema
	noncetest.Run(t, noncetest.Config{
		New: func(t *testing.T, lifetime time.Duration) acme.NonceStore {
			// One schema per test, shared by the stores New makes in it.
			dsn, ok := schemas.Load(t)
			if !ok {
				_, d := freshSchema(t)
				dsn, _ = schemas.LoadOrStore(t, d)
				t.Cleanup(func() { schemas.Delete(t) })
			}
			ns := openDSN(t, dsn.(string)).NonceStore(lifetime)
			if ns == nil {
				t.Fatalf("NonceStore(%v) = nil", lifetime)
			}
			return ns
		},
		Shared:   true,
		Elapse:   func(_ *testing.T, d time.Duration) { time.Sleep(d) },
		Lifetime: time.Second,
	})
}
