// SPDX-License-Identifier: Apache-2.0

package web

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
)

// flakyNonces is a NonceStore whose backend can be switched off: Nonce
// and Redeem then fail as a shared store does when its server is gone.
type flakyNonces struct {
	inner                 *acme.MemoryNonces
	failIssue, failRedeem atomic.Bool
}

var errNonceBackend = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")

func (f *flakyNonces) Nonce(ctx context.Context) (string, error) {
	if f.failIssue.Load() {
		return "", errNonceBackend
	}
	return f.inner.Nonce(ctx)
}

func (f *flakyNonces) Redeem(ctx context.Context, n string) (bool, error) {
	if f.failRedeem.Load() {
		return false, errNonceBackend
	}
	return f.inner.Redeem(ctx, n)
}

// accountlessStore is the one AccountStore method new-account reaches first; the
// rest are never called by these tests. storeErr, when set, is what it
// fails with.
type accountlessStore struct {
	acme.Store
	storeErr atomic.Pointer[error]
}

func (s *accountlessStore) GetAccountByKey(context.Context, acme.Thumbprint) (*acme.Account, error) {
	if e := s.storeErr.Load(); e != nil {
		return nil, *e
	}
	return nil, acme.ErrNotFound
}

type noValidator struct{}

func (noValidator) Validate(context.Context, acme.ValidationRequest) *acme.Problem { return nil }

const nonceTestBase = "https://ca.test"

// nonceServer is a front end over flakyNonces and accountlessStore.
func nonceServer(t *testing.T) (*Server, *flakyNonces, *accountlessStore, *syncBuffer) {
	t.Helper()
	h, err := ca.GenerateHierarchy("nonce test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	issuer, err := ca.New(ca.Config{Lifetime: time.Hour}, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := acme.NewPolicy(acme.PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	store := &accountlessStore{}
	svc, err := acme.New(acme.Config{}, acme.Live{Policy: policy}, acme.Deps{Store: store, CA: issuer, Validator: noValidator{}})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := acme.NewMemoryNonces(time.Hour, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	nonces := &flakyNonces{inner: mem}
	logs := &syncBuffer{}
	srv, err := New(Config{BaseURL: nonceTestBase}, svc, nonces, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return srv, nonces, store, logs
}

// signedNewAccount is a new-account JWS (onlyReturnExisting) with nonce.
func signedNewAccount(t *testing.T, key *ecdsa.PrivateKey, nonce string) string {
	t.Helper()
	url := nonceTestBase + pathNewAccount
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		&jose.SignerOptions{EmbedJWK: true, ExtraHeaders: map[jose.HeaderKey]any{"nonce": nonce, "url": url}})
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign([]byte(`{"onlyReturnExisting":true}`))
	if err != nil {
		t.Fatal(err)
	}
	return jws.FullSerialize()
}

type nonceResult struct {
	status                       int
	typ, detail                  string
	retryAfter, nonce, cacheCtrl string
}

func serve(t *testing.T, h http.Handler, method, path, contentType, body string) nonceResult {
	t.Helper()
	req := httptest.NewRequest(method, nonceTestBase+path, strings.NewReader(body))
	req.RemoteAddr = "127.0.0.1:40000"
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, req)
	res := nonceResult{status: rr.Code, retryAfter: rr.Header().Get("Retry-After"),
		nonce: rr.Header().Get("Replay-Nonce"), cacheCtrl: rr.Header().Get("Cache-Control")}
	if strings.HasPrefix(rr.Header().Get("Content-Type"), "application/problem+json") {
		var p struct{ Type, Detail string }
		if err := json.Unmarshal(rr.Body.Bytes(), &p); err != nil {
			t.Fatalf("%s %s: problem body %q: %v", method, path, rr.Body, err)
		}
		res.typ, res.detail = p.Type, p.Detail
	}
	if res.status >= 500 && res.retryAfter == "" {
		t.Errorf("%s %s: %d without Retry-After", method, path, res.status)
	}
	return res
}

// TestNonceBackendFailure: a nonce store that fails never turns into a
// bare 500. Redeem failing is badNonce with Retry-After (and a fresh nonce
// when one can be issued); Nonce failing makes new-nonce a 503 with
// Retry-After and gives every problem a Retry-After, while other responses
// go out without a Replay-Nonce; and when the backend is back, everything
// works again.
func TestNonceBackendFailure(t *testing.T) {
	srv, nonces, store, logs := nonceServer(t)
	h := srv.Handler()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	fresh := func() string {
		t.Helper()
		res := serve(t, h, http.MethodHead, pathNewNonce, "", "")
		if res.status != http.StatusOK || res.nonce == "" {
			t.Fatalf("HEAD new-nonce with the backend up: %d, Replay-Nonce %q", res.status, res.nonce)
		}
		return res.nonce
	}
	const joseJSON = "application/jose+json"

	t.Run("redeem fails", func(t *testing.T) {
		n := fresh()
		nonces.failRedeem.Store(true)
		defer nonces.failRedeem.Store(false)
		res := serve(t, h, http.MethodPost, pathNewAccount, joseJSON, signedNewAccount(t, key, n))
		if res.status != http.StatusBadRequest || res.typ != string(acme.ProbBadNonce) {
			t.Fatalf("got %d %s, want 400 badNonce", res.status, res.typ)
		}
		if !strings.Contains(res.detail, "could not be checked") {
			t.Errorf("detail %q, want it to say the nonce could not be checked", res.detail)
		}
		if res.retryAfter != "1" {
			t.Errorf("Retry-After %q, want 1", res.retryAfter)
		}
		if res.nonce == "" {
			t.Error("badNonce without a fresh Replay-Nonce, though one could be issued")
		}
	})

	t.Run("issue fails", func(t *testing.T) {
		n := fresh()
		nonces.failIssue.Store(true)
		defer nonces.failIssue.Store(false)
		for _, method := range []string{http.MethodHead, http.MethodGet} {
			res := serve(t, h, method, pathNewNonce, "", "")
			if res.status != http.StatusServiceUnavailable || res.retryAfter != "1" || res.nonce != "" {
				t.Errorf("%s new-nonce: %d, Retry-After %q, Replay-Nonce %q; want 503, 1, none", method, res.status, res.retryAfter, res.nonce)
			}
			if res.cacheCtrl != "no-store" {
				t.Errorf("%s new-nonce: Cache-Control %q, want no-store", method, res.cacheCtrl)
			}
			if method == http.MethodGet && res.typ != string(acme.ProbServerInternal) {
				t.Errorf("GET new-nonce: problem %q, want serverInternal", res.typ)
			}
		}
		if res := serve(t, h, http.MethodGet, "/directory", "", ""); res.status != http.StatusOK || res.nonce != "" {
			t.Errorf("directory: %d, Replay-Nonce %q; want 200 without a nonce", res.status, res.nonce)
		}
		// A problem unrelated to nonces still tells the client when to
		// come back for one.
		res := serve(t, h, http.MethodPost, pathNewAccount, "application/json", "{}")
		if res.status != http.StatusUnsupportedMediaType || res.retryAfter != "1" {
			t.Errorf("a 415 sent without a nonce: %d, Retry-After %q; want 415, 1", res.status, res.retryAfter)
		}
		// The nonce issued before still redeems: the request is decided.
		res = serve(t, h, http.MethodPost, pathNewAccount, joseJSON, signedNewAccount(t, key, n))
		if res.typ != string(acme.ProbAccountDoesNotExist) || res.retryAfter != "1" || res.nonce != "" {
			t.Errorf("a signed request: %d %s, Retry-After %q, Replay-Nonce %q; want accountDoesNotExist, 1, none", res.status, res.typ, res.retryAfter, res.nonce)
		}
	})

	t.Run("both fail", func(t *testing.T) {
		n := fresh()
		nonces.failIssue.Store(true)
		nonces.failRedeem.Store(true)
		res := serve(t, h, http.MethodPost, pathNewAccount, joseJSON, signedNewAccount(t, key, n))
		nonces.failIssue.Store(false)
		nonces.failRedeem.Store(false)
		if res.status != http.StatusBadRequest || res.typ != string(acme.ProbBadNonce) || res.retryAfter != "1" || res.nonce != "" {
			t.Fatalf("got %d %s, Retry-After %q, Replay-Nonce %q; want 400 badNonce, 1, none", res.status, res.typ, res.retryAfter, res.nonce)
		}
		// Recovery: the nonce was not spent by the failed attempt.
		res = serve(t, h, http.MethodPost, pathNewAccount, joseJSON, signedNewAccount(t, key, n))
		if res.typ != string(acme.ProbAccountDoesNotExist) || res.nonce == "" || res.retryAfter != "" {
			t.Errorf("after recovery: %d %s, Replay-Nonce %q, Retry-After %q; want accountDoesNotExist with a nonce and no Retry-After", res.status, res.typ, res.nonce, res.retryAfter)
		}
	})

	t.Run("store fails", func(t *testing.T) {
		e := errors.New("database is locked")
		store.storeErr.Store(&e)
		defer store.storeErr.Store(nil)
		res := serve(t, h, http.MethodPost, pathNewAccount, joseJSON, signedNewAccount(t, key, fresh()))
		if res.status != http.StatusInternalServerError || res.typ != string(acme.ProbServerInternal) || res.retryAfter != "1" {
			t.Errorf("got %d %s, Retry-After %q; want 500 serverInternal with Retry-After 1", res.status, res.typ, res.retryAfter)
		}
	})

	if out := logs.String(); !strings.Contains(out, "nonce_error=") || !strings.Contains(out, "connection refused") {
		t.Errorf("the request log does not show the nonce store's error:\n%s", out)
	}
}
