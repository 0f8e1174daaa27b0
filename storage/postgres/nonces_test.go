// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"strings"
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
	foreign, err := newNonces(t, openFresh(t)).Nonce(ctx)
	if err != nil {
		t.Fatal(err)
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
		{"another schema's", a, foreign, false},
		{"unknown", a, "AAAAAAAAAAAAAAAAAAAAAA", false},
		{"forged (the shape of a nonce, a wrong MAC)", a, strings.Repeat("A", sealedLen), false},
		{"one character changed", b, flip(other), false},
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

// TestNonceExpiry: a nonce past its lifetime on the redeeming replica's
// clock, or issued too far in its future, does not redeem, and asks
// nothing of the database.
func TestNonceExpiry(t *testing.T) {
	s := openFresh(t)
	nonces := newNonces(t, s)
	ctx := t.Context()
	now := time.Now()
	nonces.now = func() time.Time { return now }
	old, err := nonces.Nonce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour + time.Second)
	if ok, err := nonces.Redeem(ctx, old); err != nil || ok {
		t.Errorf("Redeem(past its lifetime) = %v, %v; want false, nil", ok, err)
	}
	now = now.Add(-time.Hour - nonceClockMargin - time.Minute)
	if ok, err := nonces.Redeem(ctx, old); err != nil || ok {
		t.Errorf("Redeem(issued %v in the future) = %v, %v; want false, nil", nonceClockMargin+time.Minute, ok, err)
	}
	now = now.Add(nonceClockMargin + time.Minute + time.Minute)
	if ok, err := nonces.Redeem(ctx, old); err != nil || !ok {
		t.Errorf("Redeem(a minute old) = %v, %v; want true, nil", ok, err)
	}
}

// TestNonceSweep: the sweep deletes the redemptions past their nonce's
// lifetime and the margin (on the server's clock), and the expired
// nonces of the earlier release, and nothing else; a nonce of the earlier
// release still redeems once.
func TestNonceSweep(t *testing.T) {
	s := openFresh(t)
	nonces := newNonces(t, s)
	ctx := t.Context()
	past := time.Now().Add(-time.Hour - nonceClockMargin - time.Minute)
	nonces.now = func() time.Time { return past }
	for range 3 {
		v, err := nonces.Nonce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := nonces.Redeem(ctx, v); err != nil || !ok {
			t.Fatalf("Redeem(on the clock of an hour ago) = %v, %v", ok, err)
		}
	}
	nonces.now = time.Now
	kept, err := nonces.Nonce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := nonces.Redeem(ctx, kept); err != nil || !ok {
		t.Fatalf("Redeem = %v, %v", ok, err)
	}
	const legacy, legacyExpired = "AAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBB"
	if _, err := s.pool.Exec(ctx, `INSERT INTO nonces (value, expires) VALUES ($1, now() + interval '1 hour'), ($2, now() - interval '1 second')`, legacy, legacyExpired); err != nil {
		t.Fatal(err)
	}
	if ok, err := nonces.Redeem(ctx, legacyExpired); err != nil || ok {
		t.Errorf("Redeem(an expired nonce of the earlier release) = %v, %v; want false, nil", ok, err)
	}
	swept, err := nonces.Sweep(ctx)
	if err != nil || swept != 4 {
		t.Errorf("Sweep = %d, %v; want 4 (3 redemptions, 1 earlier nonce), nil", swept, err)
	}
	if swept, err := nonces.Sweep(ctx); err != nil || swept != 0 {
		t.Errorf("second Sweep = %d, %v; want 0, nil", swept, err)
	}
	if ok, err := nonces.Redeem(ctx, kept); err != nil || ok {
		t.Errorf("Redeem(kept, again, after the sweep) = %v, %v; want false, nil", ok, err)
	}
	for i, want := range []bool{true, false} {
		if ok, err := nonces.Redeem(ctx, legacy); err != nil || ok != want {
			t.Errorf("Redeem(a nonce of the earlier release) %d = %v, %v; want %v, nil", i+1, ok, err, want)
		}
	}
}

// TestNonceKeyLost: a crash of PostgreSQL empties the unlogged tables,
// the key with the redemptions. A nonce redeemed before does not redeem
// again, nor does one issued before and never redeemed; the replica takes
// the new key, whose nonces redeem on every replica.
func TestNonceKeyLost(t *testing.T) {
	_, dsn := freshSchema(t)
	sa := openDSN(t, dsn)
	a, b := newNonces(t, sa), newNonces(t, openDSN(t, dsn))
	ctx := t.Context()
	redeemed, err := a.Nonce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unused, err := a.Nonce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Redeem(ctx, redeemed); err != nil || !ok {
		t.Fatalf("Redeem = %v, %v", ok, err)
	}
	if _, err := sa.pool.Exec(ctx, `TRUNCATE nonce_keys, nonces_redeemed`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		store *Nonces
		nonce string
	}{
		{"redeemed before, on A", a, redeemed},
		{"redeemed before, on B", b, redeemed},
		{"unused, on B", b, unused},
		{"unused, on A", a, unused},
	} {
		if ok, err := tc.store.Redeem(ctx, tc.nonce); err != nil || ok {
			t.Errorf("%s: Redeem = %v, %v; want false, nil", tc.name, ok, err)
		}
	}
	fresh, err := a.Nonce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Redeem(ctx, fresh); err != nil || !ok {
		t.Errorf("Redeem(a nonce of the new key, on the other replica) = %v, %v; want true, nil", ok, err)
	}
	if ok, err := a.Redeem(ctx, fresh); err != nil || ok {
		t.Errorf("Redeem(it again) = %v, %v; want false, nil", ok, err)
	}
}

// TestNonceRun: Run sweeps on its interval and returns when ctx ends.
func TestNonceRun(t *testing.T) {
	s := openFresh(t)
	nonces, err := NewNonces(NonceConfig{Lifetime: time.Hour, SweepInterval: 20 * time.Millisecond}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	nonces.now = func() time.Time { return time.Now().Add(-time.Hour - nonceClockMargin - time.Minute) }
	v, err := nonces.Nonce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := nonces.Redeem(t.Context(), v); err != nil || !ok {
		t.Fatalf("Redeem = %v, %v", ok, err)
	}
	runCtx, stop := context.WithCancel(t.Context())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- nonces.Run(runCtx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left int
		if err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM nonces_redeemed`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d expired redemptions left 10 s after Run started", left)
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

// flip is v with its first character changed.
func flip(v string) string {
	c := byte('A')
	if v[0] == 'A' {
		c = 'B'
	}
	return string(c) + v[1:]
}
