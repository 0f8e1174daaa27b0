// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"
)

// attempt orders id, readies the challenge of type typ with prepare
// (given its token), triggers it and waits, bounded, for its outcome: nil
// when it turned valid, else the problem it failed with.
func (e *testEnv) attempt(ctx context.Context, c *xacme.Client, id xacme.AuthzID, typ string, prepare func(token string)) *xacme.Error {
	e.t.Helper()
	o, err := c.AuthorizeOrder(ctx, []xacme.AuthzID{id})
	if err != nil {
		e.t.Fatalf("order %s: %v", id.Value, err)
	}
	a, err := c.GetAuthorization(ctx, o.AuthzURLs[0])
	if err != nil {
		e.t.Fatal(err)
	}
	var ch *xacme.Challenge
	for _, x := range a.Challenges {
		if x.Type == typ {
			ch = x
		}
	}
	if ch == nil {
		e.t.Fatalf("%s has no %s challenge", id.Value, typ)
	}
	prepare(ch.Token)
	if _, err := c.Accept(ctx, ch); err != nil {
		e.t.Fatalf("accept: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := c.GetChallenge(ctx, ch.URI)
		if err != nil {
			e.t.Fatal(err)
		}
		switch got.Status {
		case xacme.StatusValid:
			return nil
		case xacme.StatusInvalid:
			var pe *xacme.Error
			if !errors.As(got.Error, &pe) {
				e.t.Fatalf("invalid challenge without a problem: %v", got.Error)
			}
			return pe
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("challenge %s still %s after 30 s", ch.URI, got.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wantChallengeRefused checks that p is a problem of type typ whose detail
// contains want and none of leaks.
func wantChallengeRefused(t *testing.T, p *xacme.Error, typ, want string, leaks ...string) {
	t.Helper()
	if p == nil {
		t.Fatalf("the challenge is valid, want a %s problem", typ)
	}
	if p.ProblemType != "urn:ietf:params:acme:error:"+typ || !strings.Contains(p.Detail, want) {
		t.Errorf("problem: got %s %q, want %s containing %q", p.ProblemType, p.Detail, typ, want)
	}
	for _, l := range leaks {
		if strings.Contains(p.Detail, l) {
			t.Errorf("the problem quotes %q: %q", l, p.Detail)
		}
	}
}
