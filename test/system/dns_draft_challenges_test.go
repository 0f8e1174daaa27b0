// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/dnstest"
	"github.com/weir-pki/weir/server"
)

// The end-to-end tests of the draft challenge types. x/crypto/acme makes
// the orders and answers the challenges (Accept posts {} to any challenge
// URL); the records are computed here, from the drafts' definitions.

// persistRecord is a dns-persist-01 record naming issuer and the account
// of c by its URL (the kid weir returned, as clients write the record),
// with params appended.
func persistRecord(c *xacme.Client, issuer, params string) string {
	return issuer + "; accounturi=" + string(c.KID) + params
}

// hashedPersistRecord is a dns-persist-01 record with the hashed account
// URI of draft-ietf-acme-dns-persist-02 §4.1 of the account of c (its URL
// and key) for name, with params appended.
func hashedPersistRecord(t *testing.T, c *xacme.Client, prefix, issuer, name, params string) string {
	t.Helper()
	thumb, err := xacme.JWKThumbprint(c.Key.Public())
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	h.Write([]byte{byte(len(name))})
	h.Write([]byte(name + thumb + string(c.KID)))
	return issuer + "; accounturi=" + prefix + "sha-256/" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)) + params
}

// draftEnv starts weir with both draft types on, weir.test its issuer
// domain name and CAA identity, and CAA checked.
func draftEnv(t *testing.T) *env {
	on := true
	return startEnv(t, func(c *server.Config) {
		c.Challenges.DNSAccount01.Enabled = &on
		c.Challenges.DNSPersist01 = server.PersistChallenge{Enabled: &on, IssuerDomainNames: []string{"weir.test"}}
		c.Challenges.CAA = server.CAAConfig{Enabled: true, Identities: []string{"weir.test"}}
	})
}

// register makes an account.
func register(ctx context.Context, t *testing.T, e *env, key crypto.Signer) *xacme.Client {
	t.Helper()
	c := e.Client(key)
	if _, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	return c
}

// failChallenge orders name, answers its challenge of type typ and
// expects the authorization to fail with a problem of type problem whose
// detail contains detail.
func failChallenge(ctx context.Context, t *testing.T, c *xacme.Client, name, typ, problem, detail string) {
	t.Helper()
	o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs(name))
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.GetAuthorization(ctx, o.AuthzURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != xacme.StatusPending {
		t.Fatalf("%s: authorization %s, want pending", name, a.Status)
	}
	i := slices.IndexFunc(a.Challenges, func(ch *xacme.Challenge) bool { return ch.Type == typ })
	if i < 0 {
		t.Fatalf("%s: no %s challenge", name, typ)
	}
	if _, err := c.Accept(ctx, a.Challenges[i]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitAuthorization(ctx, o.AuthzURLs[0]); err == nil {
		t.Fatalf("%s: the authorization became valid, want a %s problem", name, problem)
	}
	got, err := c.GetChallenge(ctx, a.Challenges[i].URI)
	if err != nil {
		t.Fatal(err)
	}
	var ae *xacme.Error
	if got.Status != xacme.StatusInvalid || !errors.As(got.Error, &ae) || ae.ProblemType != "urn:ietf:params:acme:error:"+problem || !strings.Contains(ae.Detail, detail) {
		t.Fatalf("%s: challenge %s with error %v, want invalid with a %s problem containing %q", name, got.Status, got.Error, problem, detail)
	}
	t.Logf("%s: %s", name, ae.Detail)
}

func TestDNSPersistEndToEnd(t *testing.T) {
	e := draftEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	prefix := e.Base + "/acme/account-hash/"

	var dir struct {
		Meta struct {
			IssuerDomainNames []string
			AccountHashPrefix string
		}
	}
	if err := json.Unmarshal(e.Get(t, e.Base+"/directory").Body, &dir); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dir.Meta.IssuerDomainNames, []string{"weir.test"}) || dir.Meta.AccountHashPrefix != prefix {
		t.Fatalf("directory meta %+v, want issuerDomainNames [weir.test] and accountHashPrefix %s", dir.Meta, prefix)
	}

	key := acmeenv.NewKey(t)
	c := register(ctx, t, e, key)
	// One record, published once, with policy=wildcard for *.
	e.DNS.SetTXT("_validation-persist.p.weir.test", persistRecord(c, "weir.test", "; policy=wildcard"))
	// CAA limits the zone to the DNS methods.
	e.DNS.SetCAA("weir.test", dnstest.CAA{Tag: "issue", Value: "weir.test; validationmethods=dns-persist-01,dns-account-01"})
	for i := range 3 {
		o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs("p.weir.test", "*.p.weir.test"))
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range o.AuthzURLs {
			a, err := c.GetAuthorization(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			// Each order validates again: no authorization of a
			// dns-persist-01 validation is reused.
			if a.Status != xacme.StatusPending {
				t.Fatalf("order %d: authorization of %s is %s, want pending", i+1, a.Identifier.Value, a.Status)
			}
			if i == 0 {
				checkPersistChallengeJSON(t, e, key, string(c.KID), u)
			}
			e.Solve(ctx, c, u, "dns-persist-01")
		}
		if o, err = c.WaitOrder(ctx, o.URI); err != nil || o.Status != xacme.StatusReady {
			t.Fatalf("order %d: %v, status %v, want ready", i+1, err, o)
		}
		chain, _, err := c.CreateOrderCert(ctx, o.FinalizeURL, acmeenv.CSRFor(t, acmeenv.NewKey(t), "p.weir.test", "*.p.weir.test"), true)
		if err != nil {
			t.Fatalf("order %d: finalize: %v", i+1, err)
		}
		e.VerifyChain(chain, "p.weir.test", "*.p.weir.test")
	}

	// Refused: another account's order, with the record naming the first.
	c2 := register(ctx, t, e, acmeenv.NewKey(t))
	failChallenge(ctx, t, c2, "p.weir.test", "dns-persist-01", "unauthorized", "is for another account: its accounturi \""+string(c.KID)+"\" is not this account's URL "+string(c2.KID))
	// Refused: the URL of the account at another server.
	other := strings.Replace(string(c.KID), e.Base, "https://other-weir.test", 1)
	e.DNS.SetTXT("_validation-persist.o.weir.test", "weir.test; accounturi="+other)
	failChallenge(ctx, t, c, "o.weir.test", "dns-persist-01", "unauthorized", "is for an account of another ACME server: its accounturi \""+other+"\"")
	// Refused: a record naming another issuer domain name.
	e.DNS.SetTXT("_validation-persist.q.weir.test", persistRecord(c, "other-ca.test", ""))
	failChallenge(ctx, t, c, "q.weir.test", "dns-persist-01", "unauthorized", "names this CA (issuer domain names weir.test)")
	// Refused by CAA: a method the zone's CAA does not list.
	e.DNS.SetCAA("h.weir.test", dnstest.CAA{Tag: "issue", Value: "weir.test; validationmethods=dns-01"})
	e.DNS.SetTXT("_validation-persist.h.weir.test", persistRecord(c, "weir.test", ""))
	failChallenge(ctx, t, c, "h.weir.test", "dns-persist-01", "caa", "not dns-persist-01")

	// persistUntil bounds the authorization; the record has the -02
	// revision's hashed account URI.
	until := time.Now().Add(time.Hour).Truncate(time.Second)
	e.DNS.SetTXT("_validation-persist.u.weir.test", hashedPersistRecord(t, c, prefix, "weir.test", "u.weir.test", "; persistUntil="+strconv.FormatInt(until.Unix(), 10)))
	o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs("u.weir.test"))
	if err != nil {
		t.Fatal(err)
	}
	e.Solve(ctx, c, o.AuthzURLs[0], "dns-persist-01")
	if a, err := c.GetAuthorization(ctx, o.AuthzURLs[0]); err != nil || !a.Expires.Equal(until) {
		t.Fatalf("authorization validated by a record with persistUntil %v: %v, expires %v", until, err, a.Expires)
	}

	// Removing the record: the next order needs validation again, and
	// fails it.
	e.DNS.ClearTXT("_validation-persist.p.weir.test")
	failChallenge(ctx, t, c, "p.weir.test", "dns-persist-01", "unauthorized", "No TXT record found at _validation-persist.p.weir.test")
}

// checkPersistChallengeJSON reads the authorization at url as JSON and
// checks its dns-persist-01 challenge's issuer-domain-names (the member
// clients read) and issuerDomainNames (its -02 spelling).
func checkPersistChallengeJSON(t *testing.T, e *env, key crypto.Signer, kid, url string) {
	t.Helper()
	res := e.PostJWS(key, url, nil, acmeenv.SignOpts{KID: kid})
	var a struct {
		Challenges []struct {
			Type              string   `json:"type"`
			IssuerDomainNames []string `json:"issuer-domain-names"`
			Camel             []string `json:"issuerDomainNames"`
		}
	}
	if err := json.Unmarshal(res.Body, &a); err != nil {
		t.Fatal(err)
	}
	for _, ch := range a.Challenges {
		want := []string(nil)
		if ch.Type == "dns-persist-01" {
			want = []string{"weir.test"}
		}
		if !slices.Equal(ch.IssuerDomainNames, want) || !slices.Equal(ch.Camel, want) {
			t.Errorf("%s challenge: issuer-domain-names %v, issuerDomainNames %v; want %v in both", ch.Type, ch.IssuerDomainNames, ch.Camel, want)
		}
	}
}

func TestDNSAccountEndToEnd(t *testing.T) {
	e := draftEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	e.DNS.SetCAA("weir.test", dnstest.CAA{Tag: "issue", Value: "weir.test; validationmethods=dns-account-01"})
	clients := []*xacme.Client{register(ctx, t, e, acmeenv.NewKey(t)), register(ctx, t, e, acmeenv.NewKey(t))}
	// Both accounts validate the same names at once, each at its own
	// label.
	var wg sync.WaitGroup
	chains := make([][][]byte, len(clients))
	for i, c := range clients {
		wg.Go(func() {
			chains[i], _ = e.Issue(ctx, c, acmeenv.NewKey(t), "dns-account-01", xacme.DomainIDs("a.weir.test", "*.a.weir.test")...)
		})
	}
	wg.Wait()
	for _, chain := range chains {
		e.VerifyChain(chain, "a.weir.test", "*.a.weir.test")
	}
	names := map[string]bool{}
	for _, c := range clients {
		names[acmeenv.AccountChallengeName(string(c.KID), "a.weir.test")] = true
	}
	if len(names) != 2 {
		t.Fatalf("the two accounts share the validation domain name %v", names)
	}
	// dns-01's record does not satisfy dns-account-01.
	c := clients[0]
	e.DNS.ClearTXT(acmeenv.AccountChallengeName(string(c.KID), "b.weir.test"))
	e.DNS.SetTXT("_acme-challenge.b.weir.test", "anything")
	failChallenge(ctx, t, c, "b.weir.test", "dns-account-01", "unauthorized", "No TXT record found at "+acmeenv.AccountChallengeName(string(c.KID), "b.weir.test"))
}
