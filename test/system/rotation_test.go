// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bytes"
	"context"
	"crypto/x509"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/systest"
	"github.com/weir-pki/weir/server"
)

// TestRotation (issue 25, acceptance 3): two replicas on one PostgreSQL
// schema issue under the default intermediate; a new intermediate, signed
// by the same root (weir ca sign-intermediate) and added as the issuer r2
// (weir ca add-issuer), is made active on two replicas started anew on
// the same schema and data directory. Certificates issued before and
// after the switch both verify to the root and carry their own issuer's
// URLs; a revocation of each is on its own issuer's CRL only; both CRLs
// verify with their issuer; the CRL numbers of r2 grow across the two
// replicas.
func TestRotation(t *testing.T) {
	rs := systest.StartRedis(t)
	dsn := postgresSchema(t)
	redisNonces := func(c *server.Config) { c.ACME.Nonces.Backend = "redis" }
	a1, _, lb1 := startReplicasAt(t, rs, dsn, "", redisNonces)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	c := &xacme.Client{Key: acmeenv.NewKey(t), DirectoryURL: a1.Base + "/directory", HTTPClient: lb1, UserAgent: "weir-rotation"}
	if _, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	oldChain, oldURL := a1.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "before.weir.test"})
	oldLeaf := a1.VerifyChain(oldChain, "before.weir.test")
	oldInter, err := x509.ParseCertificate(oldChain[1])
	if err != nil {
		t.Fatal(err)
	}

	// The ceremony: a key and CSR, signed by the root, added as r2.
	dd := a1.cfg.DataDir
	work := t.TempDir()
	csr, err := server.NewIntermediateKey("weir Intermediate CA R2", "weir", filepath.Join(work, "r2-key.pem"), "")
	if err != nil {
		t.Fatal(err)
	}
	signed, err := server.SignIntermediateCSR(server.RootCertFile(a1.cfg.DataDir), server.RootKey{KeyFile: server.RootKeyFile(a1.cfg.DataDir), Signer: ca.SignerConfig{Type: ca.SignerFile}}, csr, time.Now(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "r2.pem"), signed, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := server.AddIssuer(t.Context(), a1.cfg, "r2", filepath.Join(work, "r2.pem"), filepath.Join(work, "r2-key.pem"), time.Now()); err != nil {
		t.Fatal(err)
	}

	// The replicas that issue with r2, on the same schema and data
	// directory (those of before keep running: a rolling restart).
	a2, b2, lb2 := startReplicasAt(t, rs, dsn, dd, func(cfg *server.Config) {
		redisNonces(cfg)
		cfg.CA.Issuers = []server.IssuerConfig{{ID: "r2"}}
		cfg.CA.ActiveIssuer = "r2"
		cfg.Server.ExternalURL = a1.Base
	})
	for _, e := range []*env{a2, b2} {
		e.HTTP = direct(e)
	}
	c.HTTPClient = lb2
	newChain, _ := a2.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "after.weir.test"})
	newLeaf := a2.VerifyChain(newChain, "after.weir.test")
	newInter, err := x509.ParseCertificate(newChain[1])
	if err != nil {
		t.Fatal(err)
	}
	if newInter.Equal(oldInter) {
		t.Fatal("the certificate issued after the switch is signed by the old intermediate")
	}
	for _, w := range []struct {
		leaf        *x509.Certificate
		crl, issuer string
	}{
		{oldLeaf, a1.Base + "/ca/crl.der", a1.Base + "/ca/intermediate.der"},
		{newLeaf, a1.Base + "/crl/r2", a1.Base + "/ca/issuer/r2"},
	} {
		if len(w.leaf.CRLDistributionPoints) != 1 || w.leaf.CRLDistributionPoints[0] != w.crl {
			t.Errorf("%v: CRL distribution points %v, want [%s]", w.leaf.DNSNames, w.leaf.CRLDistributionPoints, w.crl)
		}
		if len(w.leaf.IssuingCertificateURL) != 1 || w.leaf.IssuingCertificateURL[0] != w.issuer {
			t.Errorf("%v: AIA caIssuers %v, want [%s]", w.leaf.DNSNames, w.leaf.IssuingCertificateURL, w.issuer)
		}
	}
	// The new replicas serve the old certificate with its own chain, and
	// each issuer's certificate at its AIA URL.
	got, err := c.FetchCert(ctx, oldURL, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 || !bytes.Equal(got[1], oldChain[1]) {
		t.Error("the old certificate is served after the switch without its own intermediate")
	}
	for _, w := range []struct {
		url  string
		want *x509.Certificate
	}{{oldLeaf.IssuingCertificateURL[0], oldInter}, {newLeaf.IssuingCertificateURL[0], newInter}} {
		if body := systest.Fetch(t, a2.HTTP, w.url); !bytes.Equal(body, w.want.Raw) {
			t.Errorf("%s does not serve its issuer's certificate", w.url)
		}
	}

	// A revocation of each: each on its own issuer's CRL only.
	for _, leaf := range []*x509.Certificate{oldLeaf, newLeaf} {
		if err := c.RevokeCert(ctx, nil, leaf.Raw, xacme.CRLReasonKeyCompromise); err != nil {
			t.Fatalf("revoke %v: %v", leaf.DNSNames, err)
		}
	}
	for _, e := range []*env{a2, b2} {
		for _, w := range []struct {
			leaf, other *x509.Certificate
			issuer      *x509.Certificate
		}{{oldLeaf, newLeaf, oldInter}, {newLeaf, oldLeaf, newInter}} {
			crl := systest.FetchCRL(t, e.HTTP, w.leaf.CRLDistributionPoints[0], w.issuer)
			if !acmeenv.CRLLists(crl, w.leaf.SerialNumber) {
				t.Errorf("%s: the CRL at %s does not list the revoked %v", e.cfg.Server.Listen, w.leaf.CRLDistributionPoints[0], w.leaf.DNSNames)
			}
			if acmeenv.CRLLists(crl, w.other.SerialNumber) {
				t.Errorf("%s: the CRL at %s lists %v, another issuer's", e.cfg.Server.Listen, w.leaf.CRLDistributionPoints[0], w.other.DNSNames)
			}
		}
	}

	// The numbers of r2's CRLs grow across the replicas: each read after a
	// revocation makes a new CRL, numbered by the store.
	var last *big.Int
	for i, e := range []*env{a2, b2, a2, b2} {
		chain, _ := a2.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "n" + string(rune('0'+i)) + ".weir.test"})
		leaf, _ := x509.ParseCertificate(chain[0])
		if _, err := e.srv.Service().AdminRevoke(ctx, ca.SerialHex(leaf.SerialNumber), 1); err != nil {
			t.Fatal(err)
		}
		crl := systest.FetchCRL(t, e.HTTP, a1.Base+"/crl/r2", newInter)
		if !acmeenv.CRLLists(crl, leaf.SerialNumber) {
			t.Errorf("round %d: r2's CRL does not list the certificate just revoked", i)
		}
		t.Logf("round %d: %s served r2's CRL number %s", i, e.cfg.Server.Listen, crl.Number)
		if last != nil && crl.Number.Cmp(last) <= 0 {
			t.Errorf("round %d: %s served r2's CRL number %s after %s: CRL numbers must grow across replicas", i, e.cfg.Server.Listen, crl.Number, last)
		}
		last = crl.Number
	}
	if ids, active := a2.srv.Service().Issuers(); active != "r2" || len(ids) != 2 || ids[0] != acme.DefaultIssuer {
		t.Errorf("issuers %v, active %q; want [default r2], r2", ids, active)
	}
	res, err := a2.HTTP.Get(a1.Base + "/crl/none")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("the CRL of an unknown issuer: %d, want 404", res.StatusCode)
	}
}
