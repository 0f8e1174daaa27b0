// SPDX-License-Identifier: Apache-2.0

package jws_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/jws"
)

// accountWithKey returns account 7 holding the public key of k.
func accountWithKey(t *testing.T, k crypto.Signer, status acme.Status) *acme.Account {
	t.Helper()
	jwk := jose.JSONWebKey{Key: k.Public()}
	js, err := jwk.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return &acme.Account{ID: "7", Key: js, KeyThumbprint: acme.Thumbprint(base64.RawURLEncoding.EncodeToString(tp)), Status: status}
}

// TestVerifyRefreshesStaleAccount: the account lookup may serve a copy
// cached before the key changed on another replica. A request signed with
// the new key verifies after one read past the cache; one signed with the
// cached key needs no such read; a bad signature costs one read and is
// still refused; a deactivated or revoked account is refused without one,
// with 401 (RFC 8555 §7.3.6).
func TestVerifyRefreshesStaleAccount(t *testing.T) {
	gen := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	oldKey, newKey, otherKey := gen(), gen(), gen()
	const url = "https://ca.test/acme/new-order"
	for _, tc := range []struct {
		name          string
		cached, fresh *acme.Account
		signer        crypto.Signer
		wantOK        bool
		wantFresh     int32
		wantType      acme.ProblemType
		wantStatus    int
		wantThumb     acme.Thumbprint
	}{
		{name: "new key, stale cache", cached: accountWithKey(t, oldKey, acme.StatusValid), fresh: accountWithKey(t, newKey, acme.StatusValid),
			signer: newKey, wantOK: true, wantFresh: 1, wantThumb: accountWithKey(t, newKey, acme.StatusValid).KeyThumbprint},
		{name: "cached key is current", cached: accountWithKey(t, oldKey, acme.StatusValid), fresh: accountWithKey(t, newKey, acme.StatusValid),
			signer: oldKey, wantOK: true, wantFresh: 0, wantThumb: accountWithKey(t, oldKey, acme.StatusValid).KeyThumbprint},
		{name: "wrong key", cached: accountWithKey(t, oldKey, acme.StatusValid), fresh: accountWithKey(t, oldKey, acme.StatusValid),
			signer: otherKey, wantFresh: 1, wantType: acme.ProbMalformed},
		{name: "wrong key, key changed too", cached: accountWithKey(t, oldKey, acme.StatusValid), fresh: accountWithKey(t, newKey, acme.StatusValid),
			signer: otherKey, wantFresh: 1, wantType: acme.ProbMalformed},
		{name: "deactivated", cached: accountWithKey(t, oldKey, acme.StatusDeactivated), fresh: accountWithKey(t, oldKey, acme.StatusDeactivated),
			signer: oldKey, wantFresh: 0, wantType: acme.ProbUnauthorized, wantStatus: http.StatusUnauthorized},
		{name: "revoked", cached: accountWithKey(t, oldKey, acme.StatusRevoked), fresh: accountWithKey(t, oldKey, acme.StatusRevoked),
			signer: oldKey, wantFresh: 0, wantType: acme.ProbUnauthorized, wantStatus: http.StatusUnauthorized},
		// Without the key, the account's status is not told.
		{name: "deactivated, wrong key", cached: accountWithKey(t, oldKey, acme.StatusDeactivated), fresh: accountWithKey(t, oldKey, acme.StatusDeactivated),
			signer: otherKey, wantFresh: 1, wantType: acme.ProbMalformed, wantStatus: http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nonces, err := acme.NewMemoryNonces(time.Hour, 100, nil)
			if err != nil {
				t.Fatal(err)
			}
			var freshCalls atomic.Int32
			v := jws.NewVerifier(nonces, func(context.Context, acme.AccountID) (*acme.Account, error) { a := *tc.cached; return &a, nil }, fuzzAccountURL)
			v.SetAccountRefresh(func(context.Context, acme.AccountID) (*acme.Account, error) {
				freshCalls.Add(1)
				a := *tc.fresh
				return &a, nil
			})
			n, _ := nonces.Nonce(t.Context())
			body := signFlat(t, tc.signer, jose.ES256, []byte("{}"), false, map[string]any{"kid": fuzzAccountURL + "7", "nonce": n, "url": url})
			req, err := v.Verify(t.Context(), body, url)
			if got := freshCalls.Load(); got != tc.wantFresh {
				t.Errorf("reads past the cache = %d, want %d", got, tc.wantFresh)
			}
			if tc.wantOK {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if req.Account.KeyThumbprint != tc.wantThumb || req.Thumbprint != tc.wantThumb {
					t.Errorf("the request's account key %s (thumbprint %s), want %s", req.Account.KeyThumbprint, req.Thumbprint, tc.wantThumb)
				}
				return
			}
			var p *acme.Problem
			if !errors.As(err, &p) || p.Type != tc.wantType {
				t.Fatalf("Verify = %v, want a %s problem", err, tc.wantType)
			}
			if tc.wantStatus != 0 && p.Status != tc.wantStatus {
				t.Errorf("Verify: status %d, want %d", p.Status, tc.wantStatus)
			}
			// A refused request spends no nonce.
			if ok, _ := nonces.Redeem(t.Context(), n); !ok {
				t.Error("the nonce of a refused request was spent")
			}
		})
	}
}
