// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto/elliptic"
	"crypto/x509"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestShardedIssuance: with CRL shards, each leaf's distribution point is
// its shard's URL, the shard fixed by its serial; without, CRLURL.
func TestShardedIssuance(t *testing.T) {
	cfg := testConfig()
	cfg.CRLShardURLs = []string{"http://crl.example.internal/1", "http://crl.example.internal/2", "http://crl.example.internal/3"}
	c := newTestCA(t, cfg, testNow())
	seen := map[int]bool{}
	for range 40 {
		iss, err := c.Issue(IssueRequest{PublicKey: publicOf(newECKey(t, elliptic.P256())), DNSNames: []string{"a.example.internal"}})
		if err != nil {
			t.Fatal(err)
		}
		want := CRLShard(iss.Cert.SerialNumber, 3)
		if iss.CRLShard != want || want < 1 || want > 3 {
			t.Fatalf("shard %d, want %d (of 1 to 3)", iss.CRLShard, want)
		}
		if dp := iss.Cert.CRLDistributionPoints; len(dp) != 1 || dp[0] != cfg.CRLShardURLs[want-1] {
			t.Errorf("shard %d: distribution points %v, want [%s]", want, dp, cfg.CRLShardURLs[want-1])
		}
		seen[want] = true
	}
	if len(seen) != 3 {
		t.Errorf("40 leaves fell in shards %v, want all 3", seen)
	}
	plain := newTestCA(t, testConfig(), testNow())
	iss, err := plain.Issue(IssueRequest{PublicKey: publicOf(newECKey(t, elliptic.P256())), DNSNames: []string{"a.example.internal"}})
	if err != nil {
		t.Fatal(err)
	}
	if iss.CRLShard != 0 || iss.Cert.CRLDistributionPoints[0] != testConfig().CRLURL {
		t.Errorf("without shards: shard %d, points %v", iss.CRLShard, iss.Cert.CRLDistributionPoints)
	}
	if CRLShard(big.NewInt(7), 0) != 0 || CRLShard(big.NewInt(7), 3) != 2 {
		t.Error("CRLShard(7, 0) must be 0 and CRLShard(7, 3) 2")
	}
	bad := testConfig()
	bad.CRLShardURLs = []string{"ftp://x/1", ""}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "shard 1") || !strings.Contains(err.Error(), "shard 2") {
		t.Errorf("Validate of bad shard URLs = %v, want both named", err)
	}
}

// TestShardCRL: a shard's CRL carries a critical issuingDistributionPoint
// naming its URL and its alias (the same CRL at another URL), which
// OpenSSL reads as such, and verifies with the intermediate; a CRL
// without a shard carries none.
func TestShardCRL(t *testing.T) {
	c := newTestCA(t, testConfig(), testNow())
	serial, _ := NewSerial()
	entries := []RevokedEntry{{Serial: serial, RevokedAt: testNow().Add(-time.Hour), Reason: ReasonKeyCompromise}}
	const url, alias = "http://crl.example.internal/r2/3", "https://ca.example.internal:14000/crl/r2/3"
	der, err := c.ShardCRL(entries, big.NewInt(7), testNow(), testNow().Add(24*time.Hour), url, alias)
	if err != nil {
		t.Fatal(err)
	}
	crl, err := x509.ParseRevocationList(der)
	if err != nil {
		t.Fatal(err)
	}
	if err := crl.CheckSignatureFrom(c.Hierarchy().Intermediate); err != nil {
		t.Error(err)
	}
	found := false
	for _, e := range crl.Extensions {
		if e.Id.Equal(oidIssuingDistributionPoint) {
			found = e.Critical && strings.Contains(string(e.Value), url) && strings.Contains(string(e.Value), alias)
		}
	}
	if !found {
		t.Errorf("no critical issuingDistributionPoint naming %s and %s in %v", url, alias, crl.Extensions)
	}
	plain, err := c.CRL(entries, big.NewInt(8), testNow(), testNow().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := x509.ParseRevocationList(plain); p == nil || len(p.Extensions) != 2 { // authority key identifier and number
		t.Errorf("a CRL without a shard has extensions %v", p.Extensions)
	}

	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed: the issuingDistributionPoint was checked by Go alone")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "shard.crl")
	if err := os.WriteFile(path, der, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(openssl, "crl", "-inform", "DER", "-in", path, "-noout", "-text").CombinedOutput()
	if err != nil {
		t.Fatalf("openssl crl: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"Issuing Distribution Point: critical", "URI:" + url, "URI:" + alias, "Only User Certificates"} {
		if !strings.Contains(text, want) {
			t.Errorf("openssl does not show %q:\n%s", want, text)
		}
	}
}
