// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// readyz GETs /readyz and returns its status, its body decoded and as
// text.
func (e *env) readyz() (int, map[string]any, string) {
	e.t.Helper()
	res := e.Get(e.t, e.Base+"/readyz")
	var body map[string]any
	if err := json.Unmarshal(res.Body, &body); err != nil {
		e.t.Fatalf("/readyz body %q: %v", res.Body, err)
	}
	return res.Status, body, string(res.Body)
}

// bearerStatus is the status of a request (GET, or POST for a path
// ending in an action) to e's admin listener with the bearer token tok,
// following no redirect.
func bearerStatus(t *testing.T, e *env, tok, path string) int {
	t.Helper()
	method := http.MethodGet
	if strings.HasSuffix(path, "/regenerate") {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(t.Context(), method, e.adminURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	client := &http.Client{Timeout: 30 * time.Second, Transport: e.HTTP.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := io.ReadAll(io.LimitReader(res.Body, 1<<20)); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode
}

// fetch GETs url with hc and returns the body of a 200.
func fetch(t *testing.T, hc *http.Client, url string) []byte {
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

// fetchCRL GETs the CRL at url and checks that issuer signed it.
func fetchCRL(t *testing.T, hc *http.Client, url string, issuer *x509.Certificate) *x509.RevocationList {
	t.Helper()
	crl, err := x509.ParseRevocationList(fetch(t, hc, url))
	if err != nil {
		t.Fatalf("CRL at %s: %v", url, err)
	}
	if err := crl.CheckSignatureFrom(issuer); err != nil {
		t.Fatalf("the CRL at %s does not verify with %s: %v", url, issuer.Subject, err)
	}
	return crl
}
