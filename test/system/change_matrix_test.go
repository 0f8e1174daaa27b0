// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// The change matrix: one row per change an operator can make to a running
// CA (change_matrix_rows_test.go, change_matrix_ca_rows_test.go). Each row
// runs on a server of its own, in a data directory of its own. Before the
// change, the row's account has state in flight: a pending order, a ready
// order (so a valid authorization) and certificates. After it, the row
// checks that nothing outside the new policy is validated or issued, each
// refusal a problem whose detail names the rule ("after"); that every
// unexpired certificate, issued before the change or after it, once
// revoked, is on the CRL at its distribution point, signed by its own
// issuer (change_matrix_crl_test.go: "revocable"); and that the server
// keeps serving ("serving"). A new change an operator can make adds its
// row to changeRows.

// The names of the matrix. The change may exclude the names in flight
// (flightZone); it never excludes keepZone's.
const (
	keepZone     = "keep.weir.test"
	flightZone   = "flight.weir.test"
	matrixTenant = "team"
	// pendingName's order is pending (its challenges unanswered),
	// readyName's ready (its authorization valid by http-01); a
	// certificate of issuedName and one of keptName are issued, and one
	// of afterName is issued after the change.
	pendingName = "p." + flightZone
	readyName   = "r." + flightZone
	issuedName  = "i." + flightZone
	keptName    = "i." + keepZone
	afterName   = "a." + keepZone
)

// changeRow is one change an operator can make to a running CA.
type changeRow struct {
	name string
	// setup adjusts the configuration weir starts with (nil: startEnv's);
	// a restart keeps it.
	setup func(*server.Config)
	// inflight is what the row has in flight when the change comes.
	inflight inflight
	// change makes the change as an operator does: a weir command, a
	// reload, a restart.
	change func(m *changeRun)
	// after checks what the change does to the state in flight and to new
	// requests.
	after func(t *testing.T, m *changeRun)
	// afterType validates the certificate issued after the change
	// (http-01 when empty).
	afterType string
}

// inflight says what a row creates before its change, besides what every
// row has (pendingName, readyName, issuedName, keptName).
type inflight struct {
	// tenant are the flags of `weir tenant create team`: the row's
	// account is then bound with an EAB key of the tenant. nil: an account
	// without EAB, of the default tenant.
	tenant []string
	// then makes what else the row needs (nil: nothing).
	then func(t *testing.T, m *changeRun)
}

// changeRun is one row as it runs.
type changeRun struct {
	t   *testing.T
	row changeRow
	e   *env // the running server (a new one after a restart)
	c   *xacme.Client
	// eab is the EAB key the account is bound with (a tenant's account)
	// and hmac its HMAC key.
	eab  admin.EABKeyView
	hmac []byte
	// pending and ready are the orders of pendingName and readyName, and
	// pendingAuthz the pending order's authorization as it was before the
	// change.
	pending, ready *xacme.Order
	pendingAuthz   *xacme.Authorization
	// orders are the row's own orders in flight, by name.
	orders map[string]*xacme.Order
	// certs are the certificates issued, before the change and after.
	certs []*matrixCert
	// token is a named admin credential's.
	token string
	// issuer is the intermediate that issues after the change when the
	// change replaces it; nil otherwise.
	issuer *x509.Certificate
}

// matrixCert is a certificate the matrix issued.
type matrixCert struct {
	name   string
	key    crypto.Signer
	leaf   *x509.Certificate
	issuer *x509.Certificate // the intermediate of its chain
}

// TestChangeMatrix runs every row of changeRows: each change an operator
// can make, against the state in flight before it.
func TestChangeMatrix(t *testing.T) {
	for _, row := range changeRows() {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			m := &changeRun{t: t, row: row, orders: map[string]*xacme.Order{}}
			m.e = startEnv(t, row.setup)
			m.build()
			row.change(m)
			m.check(t, "after", func(t *testing.T) { row.after(t, m) })
			m.check(t, "revocable", m.revocable)
			m.check(t, "serving", m.serving)
		})
	}
}

// check runs f as the subtest name of t, with the server's helpers
// failing that subtest.
func (m *changeRun) check(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		prev := m.e.t
		m.e.t = t
		defer func() { m.e.t = prev }()
		f(t)
	})
}

// build makes the state in flight: the account (of the tenant, if the
// row has one), the pending and ready orders, the certificates of
// issuedName and keptName, and what the row adds.
func (m *changeRun) build() {
	t, e := m.t, m.e
	if in := m.row.inflight; in.tenant != nil {
		e.cli.Run(t, 0, append([]string{"tenant", "create", matrixTenant}, in.tenant...)...)
		m.c, m.eab, m.hmac = e.eabKeyAccount(t, matrixTenant, matrixTenant)
	} else {
		_, _, m.c, _ = e.Registered(t)
	}
	var err error
	if m.pending, err = m.c.AuthorizeOrder(t.Context(), xacme.DomainIDs(pendingName)); err != nil {
		t.Fatalf("the pending order: %v", err)
	}
	if m.pendingAuthz, err = m.c.GetAuthorization(t.Context(), m.pending.AuthzURLs[0]); err != nil {
		t.Fatal(err)
	}
	m.ready = e.readyOrder(t, m.c, readyName)
	m.issue(t, "http-01", issuedName)
	m.issue(t, "http-01", keptName)
	if m.row.inflight.then != nil {
		m.row.inflight.then(t, m)
	}
}

// restart restarts weir on its data directory with the row's setup and
// change applied to its configuration; the account's client follows it.
func (m *changeRun) restart(change func(*server.Config)) {
	m.t.Helper()
	m.e = m.e.restart(m.t, func(c *server.Config) {
		if m.row.setup != nil {
			m.row.setup(c)
		}
		if change != nil {
			change(c)
		}
	})
	m.c.HTTPClient = m.e.HTTP
}

// issue issues a certificate for name, validated by typ, and keeps it.
func (m *changeRun) issue(t *testing.T, typ, name string) *matrixCert {
	t.Helper()
	key := acmeenv.NewKey(t)
	chain, _ := m.e.Issue(t.Context(), m.c, key, typ, xacme.DomainIDs(name)...)
	return m.keep(t, name, key, chain)
}

// finalize finalizes the ready order o of name and keeps its certificate.
func (m *changeRun) finalize(t *testing.T, o *xacme.Order, name string) (*matrixCert, error) {
	t.Helper()
	key := acmeenv.NewKey(t)
	chain, _, err := m.c.CreateOrderCert(t.Context(), o.FinalizeURL, acmeenv.CSRFor(t, key, name), true)
	if err != nil {
		return nil, err
	}
	return m.keep(t, name, key, chain), nil
}

// keep checks a chain issued for name and adds it to the certificates.
func (m *changeRun) keep(t *testing.T, name string, key crypto.Signer, chain [][]byte) *matrixCert {
	t.Helper()
	leaf := m.e.VerifyChain(chain, name)
	issuer, err := x509.ParseCertificate(chain[1])
	if err != nil {
		t.Fatal(err)
	}
	c := &matrixCert{name: name, key: key, leaf: leaf, issuer: issuer}
	m.certs = append(m.certs, c)
	return c
}

// completeInFlight checks that what was in flight and the change still
// admits completes: the pending order's challenge validates and the order
// issues, the ready order issues, and a new order for its name reuses its
// valid authorization. It returns the certificates issued.
func (m *changeRun) completeInFlight(t *testing.T) []*matrixCert {
	t.Helper()
	var out []*matrixCert
	m.check(t, "the pending order completes", func(t *testing.T) {
		m.e.Solve(t.Context(), m.c, m.pending.AuthzURLs[0], "http-01")
		o, err := m.c.WaitOrder(t.Context(), m.pending.URI)
		if err != nil || o.Status != xacme.StatusReady {
			t.Fatalf("the pending order once its challenge is answered: %+v, %v; want ready", o, err)
		}
		c, err := m.finalize(t, o, pendingName)
		if err != nil {
			t.Fatalf("finalizing the order pending before the change: %v", err)
		}
		out = append(out, c)
	})
	m.check(t, "the ready order issues", func(t *testing.T) {
		c, err := m.finalize(t, m.ready, readyName)
		if err != nil {
			t.Fatalf("finalizing the order ready before the change: %v", err)
		}
		out = append(out, c)
	})
	m.check(t, "the valid authorization is reused", func(t *testing.T) {
		if o, err := m.c.AuthorizeOrder(t.Context(), xacme.DomainIDs(readyName)); err != nil || o.Status != xacme.StatusReady {
			t.Errorf("a new order for %s: %+v, %v; want ready at once (its authorization reused)", readyName, o, err)
		}
	})
	return out
}

// refuseInFlight checks a change that excludes flightZone, where rule is
// the detail of the refusal of a name: the pending order's challenge is
// not validated, the ready order is refused at finalize (and becomes
// invalid), its name's valid authorization is not reused, and new orders
// of the zone are refused; each with a rejectedIdentifier problem naming
// the rule.
func (m *changeRun) refuseInFlight(t *testing.T, rule func(name string) string) {
	t.Helper()
	m.check(t, "the pending challenge is refused", func(t *testing.T) {
		m.wantChallengeRefused(t, "http-01", rule(pendingName))
	})
	m.check(t, "the ready order is refused at finalize", func(t *testing.T) {
		m.wantFinalizeRefused(t, m.ready, readyName, rule(readyName))
	})
	for _, name := range []string{readyName, "n." + flightZone} {
		m.check(t, "a new order for "+name+" is refused", func(t *testing.T) {
			_, err := m.c.AuthorizeOrder(t.Context(), xacme.DomainIDs(name))
			wantACMEError(t, "a new order for "+name, err, http.StatusBadRequest, acme.ProbRejectedIdentifier, rule(name))
		})
	}
}

// wantFinalizeRefused checks that finalizing the ready order o of name is
// refused with a rejectedIdentifier problem holding detail, and that the
// order is invalid after.
func (m *changeRun) wantFinalizeRefused(t *testing.T, o *xacme.Order, name, detail string) {
	t.Helper()
	_, err := m.finalize(t, o, name)
	wantACMEError(t, "finalizing the order of "+name+" after the change", err, http.StatusBadRequest, acme.ProbRejectedIdentifier, detail)
	if got, err := m.c.GetOrder(t.Context(), o.URI); err != nil || got.Status != xacme.StatusInvalid {
		t.Errorf("the refused order of %s: %+v, %v; want invalid", name, got, err)
	}
}

// wantChallengeRefused answers challenge typ of the pending order's
// authorization, as the client saw it before the change (its response
// published, so only a refusal stops it), and checks that the
// authorization is not validated and that the refusal is an ACME problem,
// in answer to the POST or as the challenge's error, whose detail holds
// each of rule.
func (m *changeRun) wantChallengeRefused(t *testing.T, typ string, rule ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	a := m.pendingAuthz
	i := slices.IndexFunc(a.Challenges, func(ch *xacme.Challenge) bool { return ch.Type == typ })
	if i < 0 {
		t.Fatalf("the authorization of %s pending before the change has no %s challenge", a.Identifier.Value, typ)
	}
	ch := a.Challenges[i]
	m.e.Publish(m.c, a, ch)
	_, err := m.c.Accept(ctx, ch)
	if err == nil {
		_, err = m.c.WaitAuthorization(ctx, a.URI) // settled either way
	}
	if got, _ := m.c.GetAuthorization(ctx, a.URI); got != nil && got.Status == xacme.StatusValid {
		t.Fatalf("the %s challenge of %s answered after the change was validated; want it refused with a problem naming %q", typ, a.Identifier.Value, rule)
	}
	var ae *xacme.Error
	if !errors.As(err, &ae) {
		// Accepted, then failed: the problem is the challenge's.
		got, gerr := m.c.GetChallenge(ctx, ch.URI)
		if gerr != nil || got.Error == nil || !errors.As(got.Error, &ae) {
			t.Fatalf("the %s challenge answered after the change: %v; challenge %+v, %v; want an ACME problem naming %q", typ, err, got, gerr, rule)
		}
	}
	wantRefusal(t, "the "+typ+" challenge answered after the change", ae, rule...)
}

// wantRefusal checks that ae is an ACME problem (4xx) whose detail holds
// each of subs.
func wantRefusal(t *testing.T, what string, ae *xacme.Error, subs ...string) {
	t.Helper()
	if ae.StatusCode < 400 || ae.StatusCode > 499 || !strings.HasPrefix(ae.ProblemType, "urn:ietf:params:acme:error:") {
		t.Errorf("%s: %d %s %q; want a 4xx ACME problem", what, ae.StatusCode, ae.ProblemType, ae.Detail)
	}
	for _, s := range subs {
		if !strings.Contains(ae.Detail, s) {
			t.Errorf("%s: detail %q; want it to name %q", what, ae.Detail, s)
		}
	}
}

// offered makes a new order for name and returns it with its first
// authorization.
func (m *changeRun) offered(t *testing.T, name string) (*xacme.Order, *xacme.Authorization) {
	t.Helper()
	o, err := m.c.AuthorizeOrder(t.Context(), xacme.DomainIDs(name))
	if err != nil {
		t.Fatalf("a new order for %s: %v", name, err)
	}
	a, err := m.c.GetAuthorization(t.Context(), o.AuthzURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	return o, a
}

// challengeTypesOf lists the types of a's challenges.
func challengeTypesOf(a *xacme.Authorization) []string {
	var out []string
	for _, ch := range a.Challenges {
		out = append(out, ch.Type)
	}
	return out
}

// serving checks that the server still answers: ready, and a new order is
// created.
func (m *changeRun) serving(t *testing.T) {
	if status, _, body := m.e.readyz(); status != http.StatusOK {
		t.Errorf("/readyz after the change: %d %s", status, body)
	}
	if _, err := m.c.AuthorizeOrder(t.Context(), xacme.DomainIDs("last."+keepZone)); err != nil {
		t.Errorf("a new order after the change: %v", err)
	}
}
