// SPDX-License-Identifier: Apache-2.0

package acmeenv

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base32"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"
)

// NewKey makes a P-256 key.
func NewKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// CSRFor makes a CSR of key for names: DNS names, or IP addresses.
func CSRFor(t *testing.T, key crypto.Signer, names ...string) []byte {
	t.Helper()
	tmpl := &x509.CertificateRequest{}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// AccountChallengeName is dns-account-01's validation domain name
// (draft-ietf-acme-dns-account-label): "_" || base32(SHA-256(account
// URL)[0:10]), lower case, then "._acme-challenge." and the name.
func AccountChallengeName(accountURL, name string) string {
	sum := sha256.Sum256([]byte(accountURL))
	return "_" + strings.ToLower(base32.StdEncoding.EncodeToString(sum[:10])) + "._acme-challenge." + name
}

// Client returns an x/crypto/acme client for key.
func (e *Env) Client(key crypto.Signer) *xacme.Client {
	return &xacme.Client{Key: key, DirectoryURL: e.Base + "/directory", HTTPClient: e.HTTP, UserAgent: "weir-e2e"}
}

// Registered makes an account with x/crypto/acme; the context ends with
// the test or after a minute.
func (e *Env) Registered(t *testing.T) (context.Context, crypto.Signer, *xacme.Client, *xacme.Account) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	key := NewKey(t)
	c := e.Client(key)
	acct, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, key, c, acct
}

// Solve makes the challenge of type typ of the authorization at url pass
// and waits for the authorization to be valid.
func (e *Env) Solve(ctx context.Context, c *xacme.Client, authzURL, typ string) {
	e.t.Helper()
	a, err := c.GetAuthorization(ctx, authzURL)
	if err != nil {
		e.t.Fatal(err)
	}
	if a.Status == xacme.StatusValid {
		return
	}
	var ch *xacme.Challenge
	for _, x := range a.Challenges {
		if x.Type == typ {
			ch = x
		}
	}
	if ch == nil {
		e.t.Fatalf("authorization %s has no %s challenge", a.Identifier.Value, typ)
	}
	e.Publish(c, a, ch)
	if _, err := c.Accept(ctx, ch); err != nil {
		e.t.Fatalf("accept %s: %v", typ, err)
	}
	if _, err := c.WaitAuthorization(ctx, authzURL); err != nil {
		e.t.Fatalf("wait authorization %s (%s): %v", a.Identifier.Value, typ, err)
	}
}

// Publish makes the responders answer challenge ch of authorization a
// as c's account must: a validation of it then passes.
func (e *Env) Publish(c *xacme.Client, a *xacme.Authorization, ch *xacme.Challenge) {
	e.t.Helper()
	switch ch.Type {
	case "http-01":
		ka, _ := c.HTTP01ChallengeResponse(ch.Token)
		e.Tokens.Store(ch.Token, ka)
	case "dns-01":
		rec, _ := c.DNS01ChallengeRecord(ch.Token)
		e.DNS.SetTXT("_acme-challenge."+a.Identifier.Value, rec)
	case "dns-account-01":
		rec, _ := c.DNS01ChallengeRecord(ch.Token)
		e.DNS.SetTXT(AccountChallengeName(string(c.KID), a.Identifier.Value), rec)
	case "dns-persist-01":
		// Nothing to do: the record persists, published before.
	case "tls-alpn-01":
		cert, err := c.TLSALPN01ChallengeCert(ch.Token, a.Identifier.Value)
		if err != nil {
			e.t.Fatal(err)
		}
		e.alpnMu.Lock()
		e.alpnCert[a.Identifier.Value] = &cert
		e.alpnMu.Unlock()
	}
}

// Issue runs a whole order for names, solving each authorization with
// typ, and returns the chain and certificate URL.
func (e *Env) Issue(ctx context.Context, c *xacme.Client, certKey crypto.Signer, typ string, ids ...xacme.AuthzID) ([][]byte, string) {
	e.t.Helper()
	o, err := c.AuthorizeOrder(ctx, ids)
	if err != nil {
		e.t.Fatalf("new-order: %v", err)
	}
	for _, u := range o.AuthzURLs {
		e.Solve(ctx, c, u, typ)
	}
	if o, err = c.WaitOrder(ctx, o.URI); err != nil {
		e.t.Fatalf("wait order: %v", err)
	}
	if o.Status != xacme.StatusReady {
		e.t.Fatalf("order status = %q, want ready", o.Status)
	}
	var names []string
	for _, id := range ids {
		names = append(names, id.Value)
	}
	chain, certURL, err := c.CreateOrderCert(ctx, o.FinalizeURL, CSRFor(e.t, certKey, names...), true)
	if err != nil {
		e.t.Fatalf("finalize: %v", err)
	}
	return chain, certURL
}

// VerifyChain checks a chain against the CA's root and returns the leaf:
// leaf and intermediate, the SANs names (and no CN), serverAuth, one CRL
// distribution point and one issuer URL, a serial of 64 to 128 bits.
func (e *Env) VerifyChain(chain [][]byte, names ...string) *x509.Certificate {
	e.t.Helper()
	if len(chain) != 2 {
		e.t.Fatalf("chain has %d certificates, want leaf + intermediate", len(chain))
	}
	leaf, err := x509.ParseCertificate(chain[0])
	if err != nil {
		e.t.Fatal(err)
	}
	inter, err := x509.ParseCertificate(chain[1])
	if err != nil {
		e.t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(inter)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: e.Roots, Intermediates: pool}); err != nil {
		e.t.Fatalf("leaf does not chain to weir's root: %v", err)
	}
	var got []string
	got = append(got, leaf.DNSNames...)
	for _, ip := range leaf.IPAddresses {
		got = append(got, ip.String())
	}
	slices.Sort(got)
	want := slices.Clone(names)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		e.t.Errorf("SANs = %v, want %v", got, want)
	}
	if leaf.Subject.CommonName != "" {
		e.t.Errorf("subject CN = %q, want SANs only", leaf.Subject.CommonName)
	}
	if !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
		e.t.Errorf("EKU %v lacks serverAuth", leaf.ExtKeyUsage)
	}
	if len(leaf.CRLDistributionPoints) != 1 || len(leaf.IssuingCertificateURL) != 1 {
		e.t.Errorf("CRL DP %v, AIA %v: want one of each", leaf.CRLDistributionPoints, leaf.IssuingCertificateURL)
	}
	if leaf.SerialNumber.BitLen() > 128 || leaf.SerialNumber.BitLen() < 64 {
		e.t.Errorf("serial has %d bits", leaf.SerialNumber.BitLen())
	}
	return leaf
}
