// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"
)

// blackHole listens on addr, accepts every connection and never reads nor
// answers: a challenge responder that hangs each validation until it
// times out. The connections close when the test ends.
func blackHole(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
}

// challengeOf returns the challenge of type typ of the authorization at
// url.
func challengeOf(ctx context.Context, t *testing.T, c *xacme.Client, url, typ string) (*xacme.Authorization, *xacme.Challenge) {
	t.Helper()
	a, err := c.GetAuthorization(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range a.Challenges {
		if ch.Type == typ {
			return a, ch
		}
	}
	t.Fatalf("authorization %s has no %s challenge", a.Identifier.Value, typ)
	return nil, nil
}

// TestValidationFairness: account A has 30 http-01 validations in flight
// against a responder that accepts and never answers (each holds a worker
// until challenges.timeout). Account B's one http-01 validation, posted
// after all of A's, is valid within 2 s of its POST: A holds at most
// acme.validation-workers-per-account of the workers, and B's job is
// served before A's queued ones.
func TestValidationFairness(t *testing.T) {
	e := startEnv(t, nil)
	const names = 30
	// A's names resolve to another loopback address, where the black
	// hole listens on the http-01 port.
	blackHole(t, fmt.Sprintf("127.0.0.2:%d", e.cfg.Challenges.HTTP01.Port))

	ctx, _, a, _ := e.Registered(t)
	var ids []xacme.AuthzID
	for i := range names {
		n := fmt.Sprintf("hole%d.weir.test", i)
		e.DNS.SetA(n, netip.MustParseAddr("127.0.0.2"))
		ids = append(ids, xacme.AuthzID{Type: "dns", Value: n})
	}
	o, err := a.AuthorizeOrder(ctx, ids)
	if err != nil {
		t.Fatalf("A's new-order: %v", err)
	}
	var chs []*xacme.Challenge
	for _, u := range o.AuthzURLs {
		_, ch := challengeOf(ctx, t, a, u, "http-01")
		chs = append(chs, ch)
	}
	// Each POST waits up to a second for its outcome; all at once.
	var wg sync.WaitGroup
	for _, ch := range chs {
		wg.Go(func() {
			if _, err := a.Accept(ctx, ch); err != nil {
				t.Errorf("A's challenge POST: %v", err)
			}
		})
	}
	wg.Wait()

	_, _, b, _ := e.Registered(t)
	bo, err := b.AuthorizeOrder(ctx, xacme.DomainIDs("fair.weir.test"))
	if err != nil {
		t.Fatalf("B's new-order: %v", err)
	}
	bz, ch := challengeOf(ctx, t, b, bo.AuthzURLs[0], "http-01")
	ka, _ := b.HTTP01ChallengeResponse(ch.Token)
	e.Tokens.Store(ch.Token, ka)
	start := time.Now()
	got, err := b.Accept(ctx, ch)
	if err != nil {
		t.Fatalf("B's challenge POST: %v", err)
	}
	// Polled every 20 ms for at most 30 s, so a failure says how late.
	for got.Status != xacme.StatusValid && got.Status != xacme.StatusInvalid && time.Since(start) < 30*time.Second {
		time.Sleep(20 * time.Millisecond)
		if got, err = b.GetChallenge(ctx, ch.URI); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	t.Logf("B's validation of %s took %s", bz.Identifier.Value, took)
	if got.Status != xacme.StatusValid {
		t.Fatalf("B's challenge is %s after %s, want valid", got.Status, took)
	}
	if took >= 2*time.Second {
		t.Errorf("B's validation took %s behind A's %d hung ones, want under 2 s", took, names)
	}
}
