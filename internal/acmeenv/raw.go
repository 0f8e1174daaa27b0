// SPDX-License-Identifier: Apache-2.0

package acmeenv

import (
	"crypto"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
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

// RawOrderReplaces asks for an order for names that replaces certID
// (ARI's replaces).
func (e *Env) RawOrderReplaces(key crypto.Signer, kid, certID string, names ...string) Response {
	e.t.Helper()
	var ids []map[string]string
	for _, n := range names {
		ids = append(ids, map[string]string{"type": "dns", "value": n})
	}
	payload, _ := json.Marshal(map[string]any{"identifiers": ids, "replaces": certID})
	return e.PostJWS(key, e.Base+"/acme/new-order", payload, SignOpts{KID: kid})
}

// RenewalInfo GETs the ARI resource of certID and returns the response
// and, on a 200, its suggested window.
func (e *Env) RenewalInfo(t *testing.T, certID string) (Response, time.Time, time.Time) {
	t.Helper()
	res := e.Get(t, e.Base+"/acme/renewal-info/"+certID)
	var v struct {
		SuggestedWindow struct{ Start, End time.Time } `json:"suggestedWindow"`
	}
	if res.Status == http.StatusOK {
		if err := json.Unmarshal(res.Body, &v); err != nil {
			t.Fatalf("renewal-info body %s: %v", res.Body, err)
		}
	}
	return res, v.SuggestedWindow.Start, v.SuggestedWindow.End
}

// Want429 checks a rate-limit rejection: status, type, an integer
// Retry-After of at least 1 second, Link rel="help", a fresh nonce, and a
// detail naming the limit and key; it returns the Retry-After.
func Want429(t *testing.T, res Response, limit, key string) int {
	t.Helper()
	typ, detail := res.Problem()
	if res.Status != http.StatusTooManyRequests || typ != "urn:ietf:params:acme:error:rateLimited" {
		t.Fatalf("got %d %s, want 429 rateLimited: %s", res.Status, typ, res.Body)
	}
	ra, err := strconv.Atoi(res.Header.Get("Retry-After"))
	if err != nil || ra < 1 {
		t.Errorf("Retry-After = %q, want whole seconds >= 1", res.Header.Get("Retry-After"))
	}
	if LinkRel(res.Header, "help") == "" {
		t.Errorf("no Link rel=\"help\" in %v", res.Header.Values("Link"))
	}
	if res.Header.Get("Replay-Nonce") == "" {
		t.Error("no Replay-Nonce on the 429")
	}
	if !strings.Contains(detail, limit) || !strings.Contains(detail, key) || !strings.Contains(detail, "retry after") {
		t.Errorf("detail %q does not name limit %q, key %q and the time it frees up", detail, limit, key)
	}
	return ra
}
