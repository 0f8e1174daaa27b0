// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// testRevokedCount checks crl.RevocationCounter, part of every store's
// acme.CertificateStore so that each replica's CRL lists the revocations
// of the others (acme.Service.CurrentCRL): the count of revoked certificates
// grows by one per revocation, expired or not, and a refused revocation
// does not move it.
func testRevokedCount(t *testing.T, f *fixture) {
	rc := f.s
	count := func(want int64) {
		t.Helper()
		n, err := rc.RevokedCount(f.ctx)
		if err != nil {
			t.Fatalf("RevokedCount: %v", err)
		}
		if n != want {
			t.Errorf("RevokedCount = %d, want %d", n, want)
		}
	}
	count(0)
	acct := f.account(t)
	live := f.issue(t, acct.ID, "live.example.com", at(90*24*time.Hour))
	expired := f.issue(t, acct.ID, "expired.example.com", at(time.Hour))
	f.issue(t, acct.ID, "good.example.com", at(90*24*time.Hour))
	count(0)
	if err := f.s.RevokeCertificate(f.ctx, live.Serial, 1, at(time.Minute), nil); err != nil {
		t.Fatalf("RevokeCertificate: %v", err)
	}
	count(1)
	wantErr(t, "RevokeCertificate(again)", f.s.RevokeCertificate(f.ctx, live.Serial, 1, at(2*time.Minute), nil), acme.ErrConflict)
	count(1)
	// Revoked at a time before the first: the count does not depend on
	// the clocks of the replicas that revoke.
	if err := f.s.RevokeCertificate(f.ctx, expired.Serial, 4, at(-time.Hour), nil); err != nil {
		t.Fatalf("RevokeCertificate: %v", err)
	}
	count(2)
}
