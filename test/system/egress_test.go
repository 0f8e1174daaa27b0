// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme/challenge"
	"github.com/weir-pki/weir/server"
)

// attempt orders id, readies the challenge of type typ with prepare
// (given its token), triggers it and waits, bounded, for its outcome: nil
// when it turned valid, else the problem it failed with.
func (e *env) attempt(ctx context.Context, c *xacme.Client, id xacme.AuthzID, typ string, prepare func(token string)) *xacme.Error {
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

// TestEgressAdminListener points validations at weir's own admin
// listener, with admin.auth none (loopback): through an http-01 redirect
// and as a tls-alpn-01 target. Without the egress policy the redirect
// fetched /api/v1/config and quoted it in the challenge's error.
func TestEgressAdminListener(t *testing.T) {
	var adminPort string
	e := startEnv(t, func(c *server.Config) {
		c.Admin.Auth = "none"
		_, adminPort, _ = net.SplitHostPort(c.Admin.Listen)
		port, err := strconv.Atoi(adminPort)
		if err != nil {
			t.Fatal(err)
		}
		// Lab mode: redirects may name the tls-alpn-01 port, which is
		// the admin listener's here.
		c.Challenges.TLSALPN01.Port = port
	})
	// The admin listener does serve the configuration to a plain GET.
	res, err := http.Get(e.adminURL + "/api/v1/config")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/config: %d, want 200 (admin.auth none)", res.StatusCode)
	}
	ctx, _, c, _ := e.Registered(t)
	to := "http://127.0.0.1:" + adminPort + "/api/v1/config"
	p := e.attempt(ctx, c, xacme.AuthzID{Type: "dns", Value: "redirect.weir.test"}, "http-01", func(token string) {
		e.Redirect.Store(token, to)
	})
	wantChallengeRefused(t, p, "connection", "weir's own listeners", "data-dir", "yaml")
	p = e.attempt(ctx, c, xacme.AuthzID{Type: "ip", Value: "127.0.0.1"}, "tls-alpn-01", func(string) {})
	wantChallengeRefused(t, p, "connection", "127.0.0.1:"+adminPort+": it is one of weir's own listeners")
}

// TestEgressReload denies loopback live, sees a validation refused, and
// allows it again: the policy is reloaded without a restart, and an
// invalid policy is refused with its key. The server reloads its changed
// file; the admin API reports each reload's outcome.
func TestEgressReload(t *testing.T) {
	e := startEnv(t, nil)
	ctx, _, c, _ := e.Registered(t)
	solve := func(token string) {
		ka, _ := c.HTTP01ChallengeResponse(token)
		e.Tokens.Store(token, ka)
	}
	if p := e.attempt(ctx, c, xacme.AuthzID{Type: "dns", Value: "before.weir.test"}, "http-01", solve); p != nil {
		t.Fatalf("before the reload: %v", p)
	}

	cfg := e.cfg
	cfg.Challenges.Egress = challenge.EgressConfig{Default: "allow", DeniedCIDRs: []string{"127.0.0.0/8"}}
	if r := e.writeAndReload(t, cfg); !r.OK {
		t.Fatalf("reload: %v", r.Error)
	}
	p := e.attempt(ctx, c, xacme.AuthzID{Type: "dns", Value: "denied.weir.test"}, "http-01", solve)
	wantChallengeRefused(t, p, "dns", "no valid IP addresses found for denied.weir.test: weir's validation egress policy does not allow connecting to 127.0.0.1: 127.0.0.0/8 is a denied range")

	bad := cfg
	bad.Challenges.Egress.AllowedCIDRs = []string{"127.0.0.0/40"}
	if r := e.writeAndReload(t, bad); r.OK || !strings.Contains(r.Error, "challenges.egress.allowed-cidrs[0]") {
		t.Fatalf("reload of a bad policy: got %+v, want it refused naming challenges.egress.allowed-cidrs[0]", r)
	}
	// Refused: the denial stays.
	p = e.attempt(ctx, c, xacme.AuthzID{Type: "dns", Value: "still.weir.test"}, "http-01", solve)
	wantChallengeRefused(t, p, "dns", "127.0.0.0/8 is a denied range")

	cfg.Challenges.Egress = challenge.EgressConfig{Default: "deny", AllowedCIDRs: []string{"127.0.0.1"}}
	last := e.writeAndReload(t, cfg)
	if !last.OK {
		t.Fatalf("reload: %v", last.Error)
	}
	if p := e.attempt(ctx, c, xacme.AuthzID{Type: "dns", Value: "after.weir.test"}, "http-01", solve); p != nil {
		t.Fatalf("after allowing 127.0.0.1 again: %v", p)
	}
	if got := last.NeedsRestart; len(got) != 0 {
		t.Errorf("needs restart: %v, want nothing (challenges.egress is live)", got)
	}
}
