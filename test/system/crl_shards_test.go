// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"net/http"
	"path"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/systest"
	"github.com/weir-pki/weir/server"
)

// TestCRLShards: with ca.crl-shards 3 and the CRL updater running, each
// certificate names its shard's URL; its revocation reaches that shard's
// CRL, which names the URL in its issuingDistributionPoint (with the
// ACME listener's URL of the same CRL) and is the only CRL signed for it
// (weir_crl_generations_total by shard).
func TestCRLShards(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.CA.CRLShards = 3
		c.CA.CRLDelay = 200 * time.Millisecond
	})
	ctx, _, c, _ := e.Registered(t)
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("shard.weir.test")...)
	leaf := e.VerifyChain(chain, "shard.weir.test")
	dp := leaf.CRLDistributionPoints
	if len(dp) != 1 || !strings.HasPrefix(dp[0], e.artefacts+"/crl/default/") {
		t.Fatalf("CRL distribution points %v, want one of %s/crl/default/N", dp, e.artefacts)
	}
	var shard int
	if _, err := fmt.Sscanf(strings.TrimPrefix(dp[0], e.artefacts+"/crl/default/"), "%d", &shard); err != nil || shard < 1 || shard > 3 {
		t.Fatalf("distribution point %s names no shard from 1 to 3", dp[0])
	}
	// Every shard and the unsharded CRL are served, over plain HTTP and
	// over HTTPS (where certificates issued before the plain-HTTP
	// listener point), each naming both URLs; no shard 4.
	for k := range 4 {
		for _, base := range []string{e.artefacts, e.Base} {
			url := fmt.Sprintf("%s/crl/default/%d", base, k)
			if k == 0 {
				url = base + "/ca/crl.der"
			}
			crl := systest.FetchCRL(t, e.HTTP, url, e.srv.Intermediate())
			for _, named := range []string{e.artefacts, e.Base} {
				if u := named + strings.TrimPrefix(url, base); !strings.Contains(string(crl.RawTBSRevocationList), u) {
					t.Errorf("the CRL at %s does not name %s (issuingDistributionPoint)", url, u)
				}
			}
		}
	}
	for _, bad := range []string{"/crl/default/4", "/crl/default/01", "/crl/default/x", "/crl/other/1"} {
		res, err := e.HTTP.Get(e.Base + bad)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", bad, res.StatusCode)
		}
	}
	before := scrapeServer(t, e.srv)
	if err := c.RevokeCert(ctx, nil, chain[0], xacme.CRLReasonKeyCompromise); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, ok := e.CRLAt(dp[0])[leaf.SerialNumber.String()]; ok {
			break
		}
		if i == 100 {
			t.Fatal("the revoked certificate is not on its shard's CRL 5 s later (crl-delay 200ms)")
		}
		time.Sleep(50 * time.Millisecond)
	}
	after := scrapeServer(t, e.srv)
	for k := range 4 {
		moved := after.Get("weir_crl_generations_total", "issuer", "default", "shard", fmt.Sprint(k)) -
			before.Get("weir_crl_generations_total", "issuer", "default", "shard", fmt.Sprint(k))
		if k == shard && moved != 1 {
			t.Errorf("shard %d (the revoked certificate's): %v CRLs signed, want 1", k, moved)
		}
		if k != shard && moved != 0 {
			t.Errorf("shard %d: %v CRLs signed for a revocation in shard %d, want 0", k, moved, shard)
		}
	}
}

// TestCRLShardsChanged: ca.crl-shards raised from 2 to 4, then lowered
// to 1, at restarts on one data directory. A certificate keeps the shard
// it was issued with: raised, the new certificates name the new shards
// and the old shards' CRLs still list the old revocations; lowered, every
// shard an unexpired certificate names is still made and served at its
// URL (issuingDistributionPoint and all) and lists its revocations, the
// log says which shards are kept and why, new certificates name the one
// CRL, and no shard beyond those named is served.
func TestCRLShardsChanged(t *testing.T) {
	dd := t.TempDir()
	shardOf := func(t *testing.T, e *env, leaf *x509.Certificate) int {
		t.Helper()
		var k int
		if _, err := fmt.Sscanf(path.Base(leaf.CRLDistributionPoints[0]), "%d", &k); err != nil {
			t.Fatalf("distribution point %v names no shard", leaf.CRLDistributionPoints)
		}
		return k
	}
	// revoked issues a certificate for name and revokes it.
	revoked := func(t *testing.T, e *env, name string) *x509.Certificate {
		t.Helper()
		ctx, _, c, _ := e.Registered(t)
		chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs(name)...)
		leaf := e.VerifyChain(chain, name)
		if err := c.RevokeCert(ctx, nil, chain[0], xacme.CRLReasonKeyCompromise); err != nil {
			t.Fatal(err)
		}
		return leaf
	}
	// listed checks that e serves the CRL at leaf's distribution point,
	// naming its URL, and that it lists leaf.
	listed := func(t *testing.T, e *env, leaf *x509.Certificate) {
		t.Helper()
		url := e.onBase(leaf.CRLDistributionPoints[0])
		crl := systest.FetchCRL(t, e.HTTP, url, e.srv.Intermediate())
		if !strings.Contains(string(crl.RawTBSRevocationList), url) {
			t.Errorf("the CRL at %s does not name its URL (issuingDistributionPoint)", url)
		}
		if !acmeenv.CRLLists(crl, leaf.SerialNumber) {
			t.Errorf("the CRL at %s does not list the revoked %v", url, leaf.DNSNames)
		}
	}
	var before, raised *x509.Certificate
	t.Run("2 shards", func(t *testing.T) {
		e := startEnv(t, func(c *server.Config) { c.DataDir, c.CA.CRLShards = dd, 2 })
		before = revoked(t, e, "before.weir.test")
		if k := shardOf(t, e, before); k < 1 || k > 2 {
			t.Fatalf("a certificate of 2 shards names shard %d", k)
		}
	})
	t.Run("raised to 4", func(t *testing.T) {
		var logs bytes.Buffer
		e := startEnvLog(t, func(c *server.Config) { c.DataDir, c.CA.CRLShards = dd, 4 }, &logs)
		listed(t, e, before)
		raised = revoked(t, e, "raised.weir.test")
		if k := shardOf(t, e, raised); k < 1 || k > 4 {
			t.Fatalf("a certificate of 4 shards names shard %d", k)
		}
		listed(t, e, raised)
		systest.FetchCRL(t, e.HTTP, e.Base+"/crl/default/4", e.srv.Intermediate())
		if strings.Contains(logs.String(), "beyond it") {
			t.Errorf("raising ca.crl-shards logged kept shards:\n%s", logs.String())
		}
	})
	t.Run("lowered to 1", func(t *testing.T) {
		var logs bytes.Buffer
		e := startEnvLog(t, func(c *server.Config) { c.DataDir, c.CA.CRLShards = dd, 1 }, &logs)
		listed(t, e, before)
		listed(t, e, raised)
		highest := max(shardOf(t, e, before), shardOf(t, e, raised))
		if !strings.Contains(logs.String(), fmt.Sprintf("weir keeps making and serving the CRLs of shards 1 to %d", highest)) {
			t.Errorf("the log does not say which shards are kept:\n%s", logs.String())
		}
		res, err := e.HTTP.Get(fmt.Sprintf("%s/crl/default/%d", e.Base, highest+1))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("shard %d, which no certificate names: %d, want 404", highest+1, res.StatusCode)
		}
		after := revoked(t, e, "lowered.weir.test")
		if dp := after.CRLDistributionPoints; len(dp) != 1 || dp[0] != e.artefacts+"/ca/crl.der" {
			t.Errorf("a certificate of 1 shard names %v, want [%s/ca/crl.der]", dp, e.artefacts)
		}
		listed(t, e, after)
	})
}
