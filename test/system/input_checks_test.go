// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto"
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
)

// wantRefused sends tc's request and checks that it is refused with tc's
// status, problem type and detail, and that the store did not change.
func wantRefused(t *testing.T, e *env, tc badCase) {
	t.Helper()
	before := snapshotDB(t, e)
	res := tc.send(t)
	if d := before.Diff(snapshotDB(t, e)); d != "" {
		t.Errorf("the refused request changed the database: %s", d)
	}
	var p acme.Problem
	err := json.Unmarshal(res.Body, &p)
	if err != nil || res.Status != tc.status || p.Type != tc.typ || p.Status != res.Status || !strings.Contains(p.Detail, tc.detail) {
		t.Fatalf("got %d %s %q (%v); want %d %s with %q", res.Status, p.Type, p.Detail, err, tc.status, tc.typ, tc.detail)
	}
	if tc.check != nil {
		tc.check(t, &p)
	}
}

// md5SignedCSR is a CSR for names signed by key with MD5, which the x509
// package refuses to make: an ordinary CSR's request info, signed again
// (PKCS #1 v1.5 over its MD5 digest) and labelled md5WithRSAEncryption.
func md5SignedCSR(t *testing.T, key *rsa.PrivateKey, names ...string) []byte {
	t.Helper()
	csr, err := x509.ParseCertificateRequest(acmeenv.CSRFor(t, key, names...))
	if err != nil {
		t.Fatal(err)
	}
	digest := md5.Sum(csr.RawTBSCertificateRequest)
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.MD5, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	md5WithRSA := asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 4} // RFC 3279 §2.2.1
	der, err := asn1.Marshal(struct {
		Info asn1.RawValue
		Alg  pkix.AlgorithmIdentifier
		Sig  asn1.BitString
	}{
		asn1.RawValue{FullBytes: csr.RawTBSCertificateRequest},
		pkix.AlgorithmIdentifier{Algorithm: md5WithRSA, Parameters: asn1.NullRawValue},
		asn1.BitString{Bytes: sig, BitLength: 8 * len(sig)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// finalizeWith sends a finalize request for the order with csr.
func (e *env) finalizeWith(key crypto.Signer, kid string, o *xacme.Order, csr []byte) func(*testing.T) acmeenv.Response {
	return func(t *testing.T) acmeenv.Response {
		payload := acmeenv.MarshalJSON(t, map[string]string{"csr": base64.RawURLEncoding.EncodeToString(csr)})
		return e.PostJWS(key, o.FinalizeURL, payload, acmeenv.SignOpts{KID: kid})
	}
}

// TestHardeningCSRSignatureAlgorithms: a CSR signed with SHA-1 or MD5 is
// refused at finalize (400 badCSR naming the algorithm), nothing is stored
// and the order stays ready; a SHA-256 CSR then issues.
func TestHardeningCSRSignatureAlgorithms(t *testing.T) {
	e := startEnv(t, nil)
	ctx, key, c, acct := e.Registered(t)
	o := e.readyOrder(t, c, "csr.weir.test")
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	csrWith := func(k crypto.Signer, alg x509.SignatureAlgorithm) []byte {
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{DNSNames: []string{"csr.weir.test"}, SignatureAlgorithm: alg}, k)
		if err != nil {
			t.Fatalf("CSR signed with %s: %v", alg, err)
		}
		return der
	}
	for _, tc := range []badCase{
		{name: "SHA1-RSA", send: e.finalizeWith(key, acct.URI, o, csrWith(rsaKey, x509.SHA1WithRSA)), detail: "signed with SHA1-RSA"},
		{name: "ECDSA-SHA1", send: e.finalizeWith(key, acct.URI, o, csrWith(acmeenv.NewKey(t), x509.ECDSAWithSHA1)), detail: "signed with ECDSA-SHA1"},
		{name: "MD5-RSA", send: e.finalizeWith(key, acct.URI, o, md5SignedCSR(t, rsaKey, "csr.weir.test")), detail: "signed with MD5-RSA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.status, tc.typ = http.StatusBadRequest, acme.ProbBadCSR
			wantRefused(t, e, tc)
			if got, err := c.GetOrder(ctx, o.URI); err != nil || got.Status != xacme.StatusReady {
				t.Fatalf("order after the refusal: %+v, %v; want ready", got, err)
			}
		})
	}
	res := e.finalizeWith(key, acct.URI, o, csrWith(rsaKey, x509.SHA256WithRSA))(t)
	acmeenv.WantStatus(t, res, http.StatusOK)
}

// TestHardeningRevocationReasons: through ACME a subscriber may give only
// the Baseline Requirements' reasons; certificateHold (which could never
// be lifted) and the CA's own reasons are 400 badRevocationReason, leave
// the certificate unrevoked and the CRL unchanged. An operator may not put
// a certificate on hold either.
func TestHardeningRevocationReasons(t *testing.T) {
	e := startEnv(t, nil)
	ctx, key, c, acct := e.Registered(t)
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("hold.weir.test")...)
	leaf := e.VerifyChain(chain, "hold.weir.test")
	serial := ca.SerialHex(leaf.SerialNumber)
	crlBefore := e.CRLSerials(leaf)
	revoke := func(reason int) func(*testing.T) acmeenv.Response {
		return func(t *testing.T) acmeenv.Response {
			payload := acmeenv.MarshalJSON(t, map[string]any{"certificate": base64.RawURLEncoding.EncodeToString(chain[0]), "reason": reason})
			return e.PostJWS(key, e.Base+"/acme/revoke-cert", payload, acmeenv.SignOpts{KID: acct.URI})
		}
	}
	for _, tc := range []badCase{
		{name: "certificateHold", send: revoke(6), detail: "reason 6 (certificateHold) is not one a subscriber may give"},
		{name: "cACompromise", send: revoke(2), detail: "reason 2 (cACompromise)"},
		{name: "privilegeWithdrawn", send: revoke(9), detail: "reason 9 (privilegeWithdrawn)"},
		{name: "aACompromise", send: revoke(10), detail: "reason 10 (aACompromise)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.status, tc.typ = http.StatusBadRequest, acme.ProbBadRevocationReason
			wantRefused(t, e, tc)
		})
	}
	var p *acme.Problem
	if _, err := e.srv.Service().AdminRevoke(ctx, serial, ca.ReasonCertificateHold); !errors.As(err, &p) || p.Type != acme.ProbBadRevocationReason {
		t.Fatalf("AdminRevoke with certificateHold: %v; want badRevocationReason", err)
	}
	if cert, err := e.srv.Store().GetCertificate(ctx, serial); err != nil || cert.Revoked() {
		t.Fatalf("certificate after the refusals: revoked %v (%v); want not revoked", cert != nil && cert.Revoked(), err)
	}
	if after := e.CRLSerials(leaf); !maps.Equal(after, crlBefore) {
		t.Fatalf("CRL after the refusals %v; want it unchanged, %v", after, crlBefore)
	}
	if err := c.RevokeCert(ctx, nil, chain[0], xacme.CRLReasonCessationOfOperation); err != nil {
		t.Fatalf("revoke with cessationOfOperation: %v", err)
	}
	if got, ok := e.CRLSerials(leaf)[leaf.SerialNumber.String()]; !ok || got != ca.ReasonCessationOfOperation {
		t.Fatalf("CRL entry %d (listed %v); want cessationOfOperation", got, ok)
	}
}

// TestHardeningALabels: every label with hyphens in its third and fourth
// positions must be a valid A-label, in new-order identifiers (wildcard
// bases too), CSR names and contact domains; a valid IDN still issues.
func TestHardeningALabels(t *testing.T) {
	e := startEnv(t, nil)
	ctx, key, c, acct := e.Registered(t)
	o := e.readyOrder(t, c, "idn.weir.test")
	order := func(name string) func(*testing.T) acmeenv.Response {
		return func(*testing.T) acmeenv.Response { return e.RawOrder(key, acct.URI, name) }
	}
	rejected := func(name, detail string, id acme.Identifier) badCase {
		return badCase{name: name, send: order(name), status: http.StatusBadRequest, typ: acme.ProbRejectedIdentifier, detail: detail,
			check: func(t *testing.T, p *acme.Problem) {
				if p.Identifier == nil || *p.Identifier != id {
					t.Errorf("problem identifier %v; want %+v", p.Identifier, id)
				}
			}}
	}
	dns := func(v string) acme.Identifier { return acme.Identifier{Type: acme.IdentifierDNS, Value: v} }
	for _, tc := range []badCase{
		rejected("xn--55555555.weir.test", `label "xn--55555555" is not a valid A-label`, dns("xn--55555555.weir.test")),
		rejected("XN--55555555.weir.test", `label "xn--55555555"`, dns("XN--55555555.weir.test")),
		rejected("*.xn--55555555.weir.test", `label "xn--55555555"`, dns("*.xn--55555555.weir.test")),
		rejected("xn--a.weir.test", `label "xn--a"`, dns("xn--a.weir.test")),
		rejected("xn--a-ecp.weir.test", `label "xn--a-ecp"`, dns("xn--a-ecp.weir.test")),
		rejected("1abc.xn--mgbh0fb.weir.test", "bidi rule", dns("1abc.xn--mgbh0fb.weir.test")),
		rejected("ab--cd.weir.test", `label "ab--cd" has hyphens in the third and fourth positions`, dns("ab--cd.weir.test")),
		{name: "CSR naming an invalid A-label", status: http.StatusBadRequest, typ: acme.ProbBadCSR, detail: `label "xn--55555555"`,
			send: e.finalizeWith(key, acct.URI, o, acmeenv.CSRFor(t, acmeenv.NewKey(t), "idn.weir.test", "xn--55555555.weir.test"))},
		{name: "contact at an invalid A-label", status: http.StatusBadRequest, typ: acme.ProbInvalidContact, detail: `label "xn--55555555"`,
			send: func(t *testing.T) acmeenv.Response {
				payload := `{"termsOfServiceAgreed":true,"contact":["mailto:a@xn--55555555.weir.test"]}`
				return e.PostJWS(acmeenv.NewKey(t), e.Base+"/acme/new-account", []byte(payload), acmeenv.SignOpts{})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, e, tc) })
	}
	for _, name := range []string{"xn--bcher-kva.weir.test", "*.xn--bcher-kva.weir.test", "xn--mgbh0fb.weir.test"} {
		acmeenv.WantStatus(t, e.RawOrder(key, acct.URI, name), http.StatusCreated)
	}
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("xn--j6w193g.weir.test")...)
	e.VerifyChain(chain, "xn--j6w193g.weir.test")
}

// TestHardeningARISerialWithoutSignOctet: an ARI identifier whose serial
// lacks the zero octet DER puts before a high bit (Apache mod_md's form)
// names the same certificate, in renewalInfo and in replaces; the order
// stores the RFC 9773 form, so the certificate is replaced once whichever
// form names it.
func TestHardeningARISerialWithoutSignOctet(t *testing.T) {
	e := startEnv(t, nil)
	ctx, key, c, acct := e.Registered(t)
	// Serials are 128 random bits: half have the high bit set. 30 tries
	// all miss with probability 2^-30.
	var leaf *x509.Certificate
	for i := 0; i < 30 && leaf == nil; i++ {
		chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("ari.weir.test")...)
		if l := e.VerifyChain(chain, "ari.weir.test"); l.SerialNumber.Bytes()[0]&0x80 != 0 {
			leaf = l
		}
	}
	if leaf == nil {
		t.Fatal("30 certificates, none with the serial's high bit set")
	}
	canonical := acme.CertID(leaf)
	unpadded := base64.RawURLEncoding.EncodeToString(leaf.AuthorityKeyId) + "." + base64.RawURLEncoding.EncodeToString(leaf.SerialNumber.Bytes())
	if unpadded == canonical {
		t.Fatalf("identifier %s: the two forms do not differ", canonical)
	}

	res, start, end := e.RenewalInfo(t, unpadded)
	acmeenv.WantStatus(t, res, http.StatusOK)
	if _, wantStart, wantEnd := e.RenewalInfo(t, canonical); !start.Equal(wantStart) || !end.Equal(wantEnd) {
		t.Errorf("window of %s [%s, %s]; want that of %s, [%s, %s]", unpadded, start, end, canonical, wantStart, wantEnd)
	}

	res = e.RawOrderReplaces(key, acct.URI, unpadded, "ari.weir.test")
	acmeenv.WantStatus(t, res, http.StatusCreated)
	var o struct{ Status, Finalize, Replaces string }
	if err := json.Unmarshal(res.Body, &o); err != nil || o.Status != "ready" || o.Replaces != canonical {
		t.Fatalf("renewal order %+v (%v); want ready, replacing %s", o, err, canonical)
	}
	if _, _, err := c.CreateOrderCert(ctx, o.Finalize, acmeenv.CSRFor(t, acmeenv.NewKey(t), "ari.weir.test"), true); err != nil {
		t.Fatalf("finalize the renewal: %v", err)
	}
	for _, id := range []string{canonical, unpadded} {
		res := e.RawOrderReplaces(key, acct.URI, id, "ari.weir.test")
		if typ, _ := res.Problem(); res.Status != http.StatusConflict || typ != string(acme.ProbAlreadyReplaced) {
			t.Errorf("replacing %s again: %d %s; want 409 alreadyReplaced", id, res.Status, typ)
		}
	}
}

// TestHardeningContactWhitespace: "mailto: name@…" (getssl) and other
// spacing around the address is accepted at new-account and account
// update, and the normalised form is returned and stored; an address with
// a space inside is still refused.
func TestHardeningContactWhitespace(t *testing.T) {
	e := startEnv(t, nil)
	newAccountURL := e.Base + "/acme/new-account"
	contactsOf := func(t *testing.T, res acmeenv.Response, kid string) (returned, stored []string) {
		t.Helper()
		var v struct{ Contact []string }
		if err := json.Unmarshal(res.Body, &v); err != nil {
			t.Fatalf("account body %s: %v", res.Body, err)
		}
		a, err := e.srv.Store().GetAccount(t.Context(), acme.AccountID(e.accountID(kid)))
		if err != nil {
			t.Fatal(err)
		}
		return v.Contact, a.Contact
	}
	var key crypto.Signer
	var kid string
	for _, contact := range []string{"mailto: name@weir.test", "mailto:\tname@weir.test", " mailto:  name@weir.test \t"} {
		t.Run(contact, func(t *testing.T) {
			key = acmeenv.NewKey(t)
			payload := acmeenv.MarshalJSON(t, map[string]any{"termsOfServiceAgreed": true, "contact": []string{contact}})
			res := e.PostJWS(key, newAccountURL, payload, acmeenv.SignOpts{})
			acmeenv.WantStatus(t, res, http.StatusCreated)
			kid = res.Header.Get("Location")
			want := []string{"mailto:name@weir.test"}
			if returned, stored := contactsOf(t, res, kid); !slices.Equal(returned, want) || !slices.Equal(stored, want) {
				t.Fatalf("contact %q: returned %q, stored %q; want %q", contact, returned, stored, want)
			}
		})
	}
	if kid == "" {
		t.Fatal("no account was created")
	}
	res := e.PostJWS(key, kid, []byte(`{"contact":["mailto: other@weir.test"]}`), acmeenv.SignOpts{KID: kid})
	acmeenv.WantStatus(t, res, http.StatusOK)
	if returned, stored := contactsOf(t, res, kid); !slices.Equal(returned, stored) || !slices.Equal(stored, []string{"mailto:other@weir.test"}) {
		t.Fatalf("updated contact: returned %q, stored %q; want mailto:other@weir.test", returned, stored)
	}

	for _, tc := range []badCase{
		{name: "space inside the address", detail: "single plain", send: func(t *testing.T) acmeenv.Response {
			return e.PostJWS(acmeenv.NewKey(t), newAccountURL, []byte(`{"termsOfServiceAgreed":true,"contact":["mailto: a b@weir.test"]}`), acmeenv.SignOpts{})
		}},
		{name: "update with two addresses", detail: "single plain", send: func(t *testing.T) acmeenv.Response {
			return e.PostJWS(key, kid, []byte(`{"contact":["mailto: a@weir.test,b@weir.test"]}`), acmeenv.SignOpts{KID: kid})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.status, tc.typ = http.StatusBadRequest, acme.ProbInvalidContact
			wantRefused(t, e, tc)
		})
	}
}
