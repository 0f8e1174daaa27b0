// SPDX-License-Identifier: Apache-2.0

package acmeenv

import (
	"crypto/x509"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"
)

// PlainGet requests url with method over plain HTTP, as a relying party
// does: no TLS, nothing trusted.
func PlainGet(t *testing.T, method, url string) Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: body}
}

// CRLLists reports whether crl lists serial.
func CRLLists(crl *x509.RevocationList, serial *big.Int) bool {
	for _, r := range crl.RevokedCertificateEntries {
		if r.SerialNumber.Cmp(serial) == 0 {
			return true
		}
	}
	return false
}

// IsTimeout reports whether err is a network timeout.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
