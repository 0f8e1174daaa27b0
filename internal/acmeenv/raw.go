// SPDX-License-Identifier: Apache-2.0

package acmeenv

import (
	"crypto"
	"encoding/json"
	"testing"
)

// RawAccount registers key with a hand-made request and returns the
// response and the account URL.
func (e *Env) RawAccount(key crypto.Signer) (Response, string) {
	e.t.Helper()
	res := e.PostJWS(key, e.Base+"/acme/new-account", []byte(`{"termsOfServiceAgreed":true}`), SignOpts{})
	return res, res.Header.Get("Location")
}

// RawOrder asks for an order for names.
func (e *Env) RawOrder(key crypto.Signer, kid string, names ...string) Response {
	e.t.Helper()
	var ids []map[string]string
	for _, n := range names {
		ids = append(ids, map[string]string{"type": "dns", "value": n})
	}
	payload, _ := json.Marshal(map[string]any{"identifiers": ids})
	return e.PostJWS(key, e.Base+"/acme/new-order", payload, SignOpts{KID: kid})
}

// WantStatus fails t unless res has status.
func WantStatus(t *testing.T, res Response, status int) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
}
