// SPDX-License-Identifier: Apache-2.0

package system

import (
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
)

// TestCRLUpdater: with crl-delay set, a revocation is answered without a
// new CRL, reaches the served CRL from the background updater within the
// delay (polled, bounded), and weir_crl_regenerations_total counts it.
func TestCRLUpdater(t *testing.T) {
	e := startEnv(t, func(c *server.Config) { c.CA.CRLDelay = 200 * time.Millisecond })
	ctx, _, c, _ := e.Registered(t)
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("crl-updater.weir.test")...)
	leaf := e.VerifyChain(chain, "crl-updater.weir.test")
	if _, ok := e.CRLSerials(leaf)[leaf.SerialNumber.String()]; ok {
		t.Fatal("the certificate is on the CRL before it is revoked")
	}
	before := scrapeServer(t, e.srv).Get("weir_crl_regenerations_total")
	if err := c.RevokeCert(ctx, nil, chain[0], xacme.CRLReasonKeyCompromise); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if r, ok := e.CRLSerials(leaf)[leaf.SerialNumber.String()]; ok {
			if r != int(xacme.CRLReasonKeyCompromise) {
				t.Errorf("CRL reason %d, want keyCompromise", r)
			}
			break
		}
		if i == 100 {
			t.Fatal("the revoked certificate is not on the CRL 5 s later (crl-delay 200ms)")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after := scrapeServer(t, e.srv).Get("weir_crl_regenerations_total"); after-before < 1 || after-before > 2 {
		t.Errorf("weir_crl_regenerations_total moved by %v for one revocation, want 1 (2 if the schedule ran)", after-before)
	}
}
