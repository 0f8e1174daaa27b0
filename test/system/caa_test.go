// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/dnstest"
	"github.com/weir-pki/weir/server"
)

// TestCAAEndToEnd: with challenges.caa on, a name whose CAA record names
// another CA gets an invalid authorization and order with a caa problem
// although its challenge was answered, and a name whose CAA record names
// weir for this account and http-01 gets its certificate.
func TestCAAEndToEnd(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.Challenges.CAA = server.CAAConfig{Enabled: true, Identities: []string{"weir.internal"}}
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	var dir struct {
		Meta struct{ CAAIdentities []string }
	}
	if err := json.Unmarshal(e.Get(t, e.Base+"/directory").Body, &dir); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dir.Meta.CAAIdentities, []string{"weir.internal"}) {
		t.Errorf("meta.caaIdentities = %v, want [weir.internal]", dir.Meta.CAAIdentities)
	}

	c := e.Client(acmeenv.NewKey(t))
	acct, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
	if err != nil {
		t.Fatal(err)
	}
	// The CAA records sit on the parents, as zones usually have them.
	e.DNS.SetCAA("forbidden.weir.test", dnstest.CAA{Tag: "issue", Value: "other-ca.example"})
	e.DNS.SetCAA("allowed.weir.test", dnstest.CAA{Tag: "issue",
		Value: "weir.internal; accounturi=" + acct.URI + "; validationmethods=http-01"})

	// Allowed: issued.
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("www.allowed.weir.test")...)
	e.VerifyChain(chain, "www.allowed.weir.test")

	// Forbidden: the challenge is answered correctly, CAA refuses.
	o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs("www.forbidden.weir.test"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.GetAuthorization(ctx, o.AuthzURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	var ch *xacme.Challenge
	for _, x := range a.Challenges {
		if x.Type == "http-01" {
			ch = x
		}
	}
	if ch == nil {
		t.Fatal("no http-01 challenge")
	}
	ka, _ := c.HTTP01ChallengeResponse(ch.Token)
	e.Tokens.Store(ch.Token, ka)
	if _, err := c.Accept(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitAuthorization(ctx, o.AuthzURLs[0]); err == nil {
		t.Fatal("the authorization became valid; want CAA to refuse it")
	}
	got, err := c.GetChallenge(ctx, ch.URI)
	if err != nil {
		t.Fatal(err)
	}
	var ae *xacme.Error
	if got.Status != xacme.StatusInvalid || !errors.As(got.Error, &ae) || ae.ProblemType != "urn:ietf:params:acme:error:caa" {
		t.Fatalf("challenge %s with error %v, want invalid with a caa problem", got.Status, got.Error)
	}
	t.Logf("caa problem: %s", ae.Detail)
	order, err := c.GetOrder(ctx, o.URI)
	if err != nil {
		t.Fatal(err)
	}
	if order.Status != xacme.StatusInvalid {
		t.Errorf("order status %s, want invalid", order.Status)
	}

	// Another account is not the one the allowed name's record names.
	c2 := e.Client(acmeenv.NewKey(t))
	if _, err := c2.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	o2, err := c2.AuthorizeOrder(ctx, xacme.DomainIDs("other.allowed.weir.test"))
	if err != nil {
		t.Fatal(err)
	}
	a2, err := c2.GetAuthorization(ctx, o2.AuthzURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range a2.Challenges {
		if x.Type == "http-01" {
			ka, _ := c2.HTTP01ChallengeResponse(x.Token)
			e.Tokens.Store(x.Token, ka)
			if _, err := c2.Accept(ctx, x); err != nil {
				t.Fatal(err)
			}
			if _, err := c2.WaitAuthorization(ctx, o2.AuthzURLs[0]); err == nil {
				t.Fatal("another account's authorization became valid; want accounturi to refuse it")
			}
			if got, err := c2.GetChallenge(ctx, x.URI); err != nil || !errors.As(got.Error, &ae) || ae.ProblemType != "urn:ietf:params:acme:error:caa" {
				t.Fatalf("another account's challenge: %v / %+v, want a caa problem", err, got)
			}
		}
	}
}
