package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"
)

// TestCRLShards: with ca.crl-shards 3 and the CRL updater running, each
// certificate names its shard's URL; its revocation reaches that shard's
// CRL, which names the URL in its issuingDistributionPoint and is the
// only CRL signed for it (weir_crl_generations_total by shard).
func TestCRLShards(t *testing.T) {
	e := startEnv(t, func(c *Config) {
		c.CA.CRLShards = 3
		c.CA.CRLDelay = 200 * time.Millisecond
	})
	ctx, _, c, _ := e.registered(t)
	chain, _ := e.issue(ctx, c, newKey(t), "http-01", xacme.DomainIDs("shard.weir.test")...)
	leaf := e.verifyChain(chain, "shard.weir.test")
	dp := leaf.CRLDistributionPoints
	if len(dp) != 1 || !strings.HasPrefix(dp[0], e.base+"/crl/default/") {
		t.Fatalf("CRL distribution points %v, want one of %s/crl/default/N", dp, e.base)
	}
	var shard int
	if _, err := fmt.Sscanf(strings.TrimPrefix(dp[0], e.base+"/crl/default/"), "%d", &shard); err != nil || shard < 1 || shard > 3 {
		t.Fatalf("distribution point %s names no shard from 1 to 3", dp[0])
	}
	// Every shard and the unsharded CRL are served; no shard 4.
	for k := range 4 {
		url := fmt.Sprintf("%s/crl/default/%d", e.base, k)
		if k == 0 {
			url = e.base + "/ca/crl.der"
		}
		crl := fetchCRL(t, e.http, url, e.srv.svc.CA().Hierarchy().Intermediate)
		if !strings.Contains(string(crl.RawTBSRevocationList), url) {
			t.Errorf("the CRL at %s does not name its URL (issuingDistributionPoint)", url)
		}
	}
	for _, bad := range []string{"/crl/default/4", "/crl/default/01", "/crl/default/x", "/crl/other/1"} {
		res, err := e.http.Get(e.base + bad)
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
		if _, ok := e.crlAt(dp[0])[leaf.SerialNumber.String()]; ok {
			break
		}
		if i == 100 {
			t.Fatal("the revoked certificate is not on its shard's CRL 5 s later (crl-delay 200ms)")
		}
		time.Sleep(50 * time.Millisecond)
	}
	after := scrapeServer(t, e.srv)
	for k := range 4 {
		moved := after.get("weir_crl_generations_total", "issuer", "default", "shard", fmt.Sprint(k)) -
			before.get("weir_crl_generations_total", "issuer", "default", "shard", fmt.Sprint(k))
		if k == shard && moved != 1 {
			t.Errorf("shard %d (the revoked certificate's): %v CRLs signed, want 1", k, moved)
		}
		if k != shard && moved != 0 {
			t.Errorf("shard %d: %v CRLs signed for a revocation in shard %d, want 0", k, moved, shard)
		}
	}
}
