// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
)

func TestEndToEnd(t *testing.T) {
	e := startEnv(t, func(c *server.Config) { c.ACME.OrdersPerPage = 2 })
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	acctKey := acmeenv.NewKey(t)
	c := e.Client(acctKey)
	dir, err := c.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if dir.RegURL != e.Base+"/acme/new-account" || dir.KeyChangeURL == "" || dir.RevokeURL == "" {
		t.Fatalf("directory = %+v", dir)
	}

	// Accounts: create, find again, update.
	acct, err := c.Register(ctx, &xacme.Account{Contact: []string{"mailto:ops@example.org"}}, xacme.AcceptTOS)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	if acct.Status != xacme.StatusValid || acct.URI != e.Base+"/acme/account/1" {
		t.Fatalf("account = %+v", acct)
	}
	if _, err := e.Client(acctKey).Register(ctx, &xacme.Account{}, xacme.AcceptTOS); !errors.Is(err, xacme.ErrAccountAlreadyExists) {
		t.Fatalf("second register: err = %v, want ErrAccountAlreadyExists", err)
	}
	acct.Contact = []string{"mailto:pki@example.org"}
	if acct, err = c.UpdateReg(ctx, acct); err != nil || !slices.Equal(acct.Contact, []string{"mailto:pki@example.org"}) {
		t.Fatalf("update contact: %+v, %v", acct, err)
	}

	// http-01 for two names, dns-01 for a wildcard and its base, tls-alpn-01, an IP.
	certKey := acmeenv.NewKey(t)
	chain, certURL := e.Issue(ctx, c, certKey, "http-01", xacme.DomainIDs("a.weir.test", "b.weir.test")...)
	leaf := e.VerifyChain(chain, "a.weir.test", "b.weir.test")
	wchain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "dns-01", xacme.DomainIDs("*.w.weir.test", "w.weir.test")...)
	e.VerifyChain(wchain, "*.w.weir.test", "w.weir.test")
	achain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "tls-alpn-01", xacme.DomainIDs("alpn.weir.test")...)
	e.VerifyChain(achain, "alpn.weir.test")
	ichain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.IPIDs("127.0.0.1")...)
	e.VerifyChain(ichain, "127.0.0.1")

	// The certificate resource serves exactly the chain.
	fetched, err := c.FetchCert(ctx, certURL, true)
	if err != nil || len(fetched) != 2 || string(fetched[0]) != string(chain[0]) {
		t.Fatalf("fetch cert: %d certs, %v", len(fetched), err)
	}

	// The PEM chain names no "up" (it holds the issuer already). Asked
	// for application/pkix-cert, the resource serves the leaf alone with
	// a Link rel="up" to its issuer, which serves the intermediate as a
	// PEM chain by default and as DER on request.
	res := e.PostJWS(acctKey, certURL, []byte{}, acmeenv.SignOpts{KID: acct.URI})
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/pem-certificate-chain" || acmeenv.LinkRel(res.Header, "up") != "" {
		t.Fatalf("certificate POST-as-GET: %d %q, Link %v", res.Status, res.Header.Get("Content-Type"), res.Header.Values("Link"))
	}
	res = e.PostJWSAccept(acctKey, certURL, []byte{}, acmeenv.SignOpts{KID: acct.URI}, "application/pkix-cert")
	up := acmeenv.LinkRel(res.Header, "up")
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/pkix-cert" || !bytes.Equal(res.Body, chain[0]) || up == "" {
		t.Fatalf("certificate as application/pkix-cert: %d %q, Link %v", res.Status, res.Header.Get("Content-Type"), res.Header.Values("Link"))
	}
	res = e.PostJWS(acctKey, up, []byte{}, acmeenv.SignOpts{KID: acct.URI})
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/pem-certificate-chain" {
		t.Fatalf("issuer %s: %d %q %s", up, res.Status, res.Header.Get("Content-Type"), res.Body)
	}
	if b, rest := pem.Decode(res.Body); b == nil || b.Type != "CERTIFICATE" || !bytes.Equal(b.Bytes, chain[1]) || len(bytes.TrimSpace(rest)) != 0 {
		t.Fatalf("issuer %s does not serve exactly the chain's intermediate: %q", up, res.Body)
	}
	res = e.PostJWSAccept(acctKey, up, []byte{}, acmeenv.SignOpts{KID: acct.URI}, "application/pkix-cert")
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/pkix-cert" || !bytes.Equal(res.Body, chain[1]) {
		t.Fatalf("issuer %s as application/pkix-cert: %d %q", up, res.Status, res.Header.Get("Content-Type"))
	}

	// Authorization reuse: a second order for a.weir.test is ready at once.
	o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs("a.weir.test"))
	if err != nil || o.Status != xacme.StatusReady {
		t.Fatalf("order with reused authz: status %v, err %v", o, err)
	}

	// Authorization deactivation makes the order invalid.
	o, err = c.AuthorizeOrder(ctx, xacme.DomainIDs("deact.weir.test"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RevokeAuthorization(ctx, o.AuthzURLs[0]); err != nil {
		t.Fatalf("deactivate authz: %v", err)
	}
	if a, err := c.GetAuthorization(ctx, o.AuthzURLs[0]); err != nil || a.Status != xacme.StatusDeactivated {
		t.Fatalf("authz after deactivation: %+v, %v", a, err)
	}
	if o, err = c.GetOrder(ctx, o.URI); err != nil || o.Status != xacme.StatusInvalid {
		t.Fatalf("order after authz deactivation: %+v, %v", o, err)
	}

	// The orders list, page by page.
	var listed []string
	next := acct.OrdersURL
	for i := 0; next != "" && i < 10; i++ {
		res := e.PostJWS(acctKey, next, []byte{}, acmeenv.SignOpts{KID: acct.URI})
		if res.Status != http.StatusOK {
			t.Fatalf("orders list: %d %s", res.Status, res.Body)
		}
		var page struct{ Orders []string }
		if err := json.Unmarshal(res.Body, &page); err != nil {
			t.Fatal(err)
		}
		listed = append(listed, page.Orders...)
		next = acmeenv.LinkRel(res.Header, "next")
	}
	if len(listed) != 6 {
		t.Errorf("orders list has %d orders, want 6: %v", len(listed), listed)
	}

	// Revocation by the certificate's key, then again: alreadyRevoked.
	if err := c.RevokeCert(ctx, certKey, chain[0], xacme.CRLReasonKeyCompromise); err != nil {
		t.Fatalf("revoke by certificate key: %v", err)
	}
	// (x/crypto/acme hides alreadyRevoked, so this one is sent by hand.)
	payload, _ := json.Marshal(map[string]any{"certificate": base64.RawURLEncoding.EncodeToString(chain[0]), "reason": 1})
	res = e.PostJWS(acctKey, dir.RevokeURL, payload, acmeenv.SignOpts{KID: acct.URI})
	if typ, _ := res.Problem(); res.Status != http.StatusBadRequest || typ != "urn:ietf:params:acme:error:alreadyRevoked" {
		t.Fatalf("second revoke: %d %s, want 400 alreadyRevoked", res.Status, res.Body)
	}
	var ae *xacme.Error
	// Revocation by the account key.
	wleaf, _ := x509.ParseCertificate(wchain[0])
	if err := c.RevokeCert(ctx, nil, wchain[0], xacme.CRLReasonSuperseded); err != nil {
		t.Fatalf("revoke by account: %v", err)
	}
	serials := e.CRLSerials(leaf)
	if serials[leaf.SerialNumber.String()] != int(xacme.CRLReasonKeyCompromise) {
		t.Errorf("CRL %v lacks %s with reason keyCompromise", serials, leaf.SerialNumber)
	}
	if serials[wleaf.SerialNumber.String()] != int(xacme.CRLReasonSuperseded) {
		t.Errorf("CRL %v lacks %s with reason superseded", serials, wleaf.SerialNumber)
	}

	// Another account may not revoke, unless it holds authorizations.
	other := e.Client(acmeenv.NewKey(t))
	if _, err := other.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	err = other.RevokeCert(ctx, nil, achain[0], xacme.CRLReasonUnspecified)
	if !errors.As(err, &ae) || ae.ProblemType != "urn:ietf:params:acme:error:unauthorized" {
		t.Fatalf("revoke by a stranger: %v, want unauthorized", err)
	}
	e.Issue(ctx, other, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("alpn.weir.test")...)
	if err := other.RevokeCert(ctx, nil, achain[0], xacme.CRLReasonCessationOfOperation); err != nil {
		t.Fatalf("revoke by an account holding authorizations: %v", err)
	}

	// Key rollover: the new key works, the old one no longer does.
	newAcctKey := acmeenv.NewKey(t)
	if err := c.AccountKeyRollover(ctx, newAcctKey); err != nil {
		t.Fatalf("key rollover: %v", err)
	}
	if _, err := e.Client(acctKey).GetReg(ctx, ""); err == nil {
		t.Fatal("old key still finds the account after rollover")
	}
	c2 := e.Client(newAcctKey)
	if a, err := c2.GetReg(ctx, ""); err != nil || a.URI != acct.URI {
		t.Fatalf("new key: %+v, %v", a, err)
	}
	// Rolling another account onto a key in use is a 409 naming that account.
	err = other.AccountKeyRollover(ctx, newAcctKey)
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusConflict {
		t.Fatalf("rollover to a used key: %v, want 409", err)
	}

	// Account deactivation: further use is unauthorized.
	if err := c2.DeactivateReg(ctx); err != nil {
		t.Fatalf("deactivate: %v", err)
	}
	_, err = c2.AuthorizeOrder(ctx, xacme.DomainIDs("late.weir.test"))
	if !errors.As(err, &ae) || ae.ProblemType != "urn:ietf:params:acme:error:unauthorized" {
		t.Fatalf("order after deactivation: %v, want unauthorized", err)
	}
}

// TestConcurrentFinalize: 50 finalize calls on one ready order produce
// exactly one certificate.
func TestConcurrentFinalize(t *testing.T) {
	e := startEnv(t, nil)
	ctx := t.Context()
	c := e.Client(acmeenv.NewKey(t))
	if _, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs("race.weir.test"))
	if err != nil {
		t.Fatal(err)
	}
	e.Solve(ctx, c, o.AuthzURLs[0], "http-01")
	csr := acmeenv.CSRFor(t, acmeenv.NewKey(t), "race.weir.test")
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		serials = map[string]bool{}
		ok      int
	)
	for range 50 {
		wg.Go(func() {
			chain, _, err := c.CreateOrderCert(ctx, o.FinalizeURL, csr, false)
			if err != nil {
				return
			}
			leaf, _ := x509.ParseCertificate(chain[0])
			mu.Lock()
			ok++
			serials[ca.SerialHex(leaf.SerialNumber)] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(serials) != 1 {
		t.Fatalf("distinct certificates issued = %d, want 1", len(serials))
	}
	got, err := c.GetOrder(ctx, o.URI)
	if err != nil || got.Status != xacme.StatusValid {
		t.Fatalf("order: %+v, %v", got, err)
	}
	for s := range serials {
		if !strings.HasSuffix(got.CertURL, s) {
			t.Errorf("order certificate %s, the one issued was %s", got.CertURL, s)
		}
	}
	t.Logf("%d of 50 finalize calls returned the certificate", ok)
}
