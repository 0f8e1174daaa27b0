// SPDX-License-Identifier: Apache-2.0

package acmeenv

import (
	"crypto/x509"
	"io"
	"net/http"
)

// CRLSerials fetches the CRL from the leaf's distribution point.
func (e *Env) CRLSerials(leaf *x509.Certificate) map[string]int {
	return e.CRLAt(leaf.CRLDistributionPoints[0])
}

// CRLAt fetches the CRL at url with e.HTTP, checks its signature by
// CRLIssuer's certificate and returns its entries, serial → reason.
func (e *Env) CRLAt(url string) map[string]int {
	e.t.Helper()
	res, err := e.HTTP.Get(url)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	der, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		e.t.Fatalf("CRL: %d %s", res.StatusCode, der)
	}
	crl, err := x509.ParseRevocationList(der)
	if err != nil {
		e.t.Fatalf("CRL: %v", err)
	}
	if err := crl.CheckSignatureFrom(e.CRLIssuer()); err != nil {
		e.t.Fatalf("CRL signature: %v", err)
	}
	out := map[string]int{}
	for _, r := range crl.RevokedCertificateEntries {
		out[r.SerialNumber.String()] = r.ReasonCode
	}
	return out
}
