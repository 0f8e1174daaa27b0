// SPDX-License-Identifier: Apache-2.0

package systest

import (
	"crypto/x509"
	"io"
	"net/http"
	"testing"
)

// Fetch GETs url with hc and returns the body of a 200.
func Fetch(t *testing.T, hc *http.Client, url string) []byte {
	t.Helper()
	res, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, body)
	}
	return body
}

// FetchCRL GETs the CRL at url and checks that issuer signed it.
func FetchCRL(t *testing.T, hc *http.Client, url string, issuer *x509.Certificate) *x509.RevocationList {
	t.Helper()
	crl, err := x509.ParseRevocationList(Fetch(t, hc, url))
	if err != nil {
		t.Fatalf("CRL at %s: %v", url, err)
	}
	if err := crl.CheckSignatureFrom(issuer); err != nil {
		t.Fatalf("the CRL at %s does not verify with %s: %v", url, issuer.Subject, err)
	}
	return crl
}
