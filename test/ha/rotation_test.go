// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/weirproc"
)

// TestRotationAcrossProcesses (issue 25, acceptance 3, with weir
// processes): three replicas on one PostgreSQL schema issue under the
// default intermediate; weir ca new-intermediate-key, sign-intermediate
// (the root key of the first data directory) and add-issuer make r2, and
// each replica is restarted in turn with r2 in ca.issuers and active.
// Certificates issued before and after both verify to the root; a
// revocation of each is on its own issuer's CRL only, signed by that
// issuer, on every replica (the CRL updater, crl-delay 5 s); and the CRL
// numbers of r2 grow across the replicas: every CRL that lists a later
// revocation has a greater number than every CRL seen for an earlier one.
func TestRotationAcrossProcesses(t *testing.T) {
	_, dsn := requirePostgres(t)
	rs := startRedis(t)
	cl := startCluster(t, clusterOpts{dsn: dsn, redis: rs})
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	c := cl.acmeClient(nil)
	if _, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	before, err := cl.issue(ctx, c, []string{"before.rotation.test"})
	if err != nil {
		t.Fatal(err)
	}

	// The ceremony, with the binary.
	work := t.TempDir()
	weir := func(args ...string) {
		t.Helper()
		out, err := exec.CommandContext(ctx, cl.bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("weir %v: %v\n%s", args, err, out)
		}
	}
	key, csr, r2 := filepath.Join(work, "r2-key.pem"), filepath.Join(work, "r2.csr"), filepath.Join(work, "r2.pem")
	weir("ca", "new-intermediate-key", "-name", "weir Intermediate CA R2", "-key-out", key, "-csr-out", csr)
	weir("ca", "sign-intermediate", "-root-cert", filepath.Join(cl.dataDirs[0], "ca", "root.pem"),
		"-root-key", filepath.Join(cl.dataDirs[0], "ca", "root-key.pem"), "-csr", csr, "-out", r2)
	weir("ca", "add-issuer", "-config", filepath.Join(cl.dataDirs[0], "weir.yaml"), "-id", "r2", "-cert", r2, "-key", key)

	// A rolling restart onto r2.
	for i, p := range cl.procs {
		if i > 0 {
			if err := weirproc.SeedCA(cl.dataDirs[0], cl.dataDirs[i]); err != nil {
				t.Fatal(err)
			}
		}
		conf, err := os.ReadFile(filepath.Join(cl.dataDirs[i], "weir.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Stop(20 * time.Second); err != nil {
			t.Fatalf("stopping replica %d: %v", i+1, err)
		}
		np, err := weirproc.Start(ctx, weirproc.Options{Bin: cl.bin, DataDir: cl.dataDirs[i], Listen: cl.listens[i],
			Config: string(conf) + "ca:\n  issuers:\n    - id: r2\n  active-issuer: r2\n", ReadyTimeout: 90 * time.Second})
		if err != nil {
			t.Fatalf("restarting replica %d on r2: %v", i+1, err)
		}
		cl.procs[i] = np
		t.Cleanup(func() {
			if err := np.Stop(20 * time.Second); err != nil {
				t.Errorf("stopping replica %d (pid %d): %v", i+1, np.PID, err)
			}
			if t.Failed() {
				t.Logf("the log of replica %d (pid %d), last lines:\n%s", i+1, np.PID, np.Tail(12))
			}
		})
	}
	after, err := cl.issue(ctx, c, []string{"after.rotation.test"})
	if err != nil {
		t.Fatal(err)
	}
	var leaves, inters []*x509.Certificate
	for _, is := range []*issued{before, after} {
		if err := cl.verify(is); err != nil {
			t.Fatal(err)
		}
		leaf, _ := x509.ParseCertificate(is.chain[0])
		inter, _ := x509.ParseCertificate(is.chain[1])
		leaves, inters = append(leaves, leaf), append(inters, inter)
	}
	if inters[0].Equal(inters[1]) {
		t.Fatal("the certificate issued after the rotation has the old intermediate")
	}
	if want := cl.base + "/crl/r2"; leaves[1].CRLDistributionPoints[0] != want {
		t.Errorf("the new certificate's CRL is %v, want %s", leaves[1].CRLDistributionPoints, want)
	}

	// Revocations: each on its own issuer's CRL only, on every replica.
	// Each round revokes, then waits for every replica's CRL of r2 to list
	// it and records the numbers.
	var prevMax *big.Int
	round := func(n int, revoke []*x509.Certificate) {
		t.Helper()
		for _, l := range revoke {
			if err := c.RevokeCert(ctx, nil, l.Raw, xacme.CRLReasonKeyCompromise); err != nil {
				t.Fatalf("round %d: revoking %v: %v", n, l.DNSNames, err)
			}
		}
		var roundMin, roundMax *big.Int
		for i := range cl.procs {
			for _, l := range revoke {
				issuer := inters[1]
				if l == leaves[0] {
					issuer = inters[0]
				}
				crl := waitListed(ctx, t, cl.direct(i), l.CRLDistributionPoints[0], issuer, l.SerialNumber)
				for _, other := range leaves[:2] {
					if other != l && listed(crl, other.SerialNumber) && other.CRLDistributionPoints[0] != l.CRLDistributionPoints[0] {
						t.Errorf("round %d: replica %d's CRL at %s lists %v, another issuer's", n, i+1, l.CRLDistributionPoints[0], other.DNSNames)
					}
				}
				if issuer != inters[1] {
					continue
				}
				t.Logf("round %d: replica %d serves r2's CRL number %s", n, i+1, crl.Number)
				if roundMin == nil || crl.Number.Cmp(roundMin) < 0 {
					roundMin = crl.Number
				}
				if roundMax == nil || crl.Number.Cmp(roundMax) > 0 {
					roundMax = crl.Number
				}
			}
		}
		if prevMax != nil && roundMin.Cmp(prevMax) <= 0 {
			t.Errorf("round %d: a CRL of r2 listing the new revocation has number %s, not above %s of a CRL of the round before", n, roundMin, prevMax)
		}
		prevMax = roundMax
	}
	round(0, leaves)
	for n := 1; n <= 2; n++ {
		is, err := cl.issue(ctx, c, []string{fmt.Sprintf("n%d.rotation.test", n)})
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := x509.ParseCertificate(is.chain[0])
		leaves = append(leaves, leaf)
		round(n, []*x509.Certificate{leaf})
	}
}

// waitListed fetches the CRL at url through hc until it lists serial
// (bounded: 15 s, for a crl-delay of 5 s), checking issuer's signature.
func waitListed(ctx context.Context, t *testing.T, hc *http.Client, url string, issuer *x509.Certificate, serial *big.Int) *x509.RevocationList {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		der, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", url, res.StatusCode, der)
		}
		crl, err := x509.ParseRevocationList(der)
		if err != nil {
			t.Fatalf("CRL at %s: %v", url, err)
		}
		if err := crl.CheckSignatureFrom(issuer); err != nil {
			t.Fatalf("the CRL at %s does not verify with %s: %v", url, issuer.Subject, err)
		}
		if listed(crl, serial) {
			return crl
		}
		if time.Now().After(deadline) {
			t.Fatalf("the CRL at %s does not list %s 15 s after its revocation", url, serial)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// listed reports whether crl lists serial.
func listed(crl *x509.RevocationList, serial *big.Int) bool {
	for _, r := range crl.RevokedCertificateEntries {
		if r.SerialNumber.Cmp(serial) == 0 {
			return true
		}
	}
	return false
}
