// SPDX-License-Identifier: Apache-2.0

// The fleet's ACME client: hand-signed JWS requests (ES256) over the one
// shared HTTP client, as internal/acmeenv makes them in the system tests,
// because x/crypto/acme has no ARI replaces and retries a 429 by itself,
// which would hide the refusals the fleet must count.

package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// acmeConn is what every simulated client shares: the HTTP client (one
// transport, HTTP/2), the directory's URLs and a pool of nonces fed by
// every response's Replay-Nonce.
type acmeConn struct {
	hc  *http.Client
	dir struct {
		NewNonce    string `json:"newNonce"`
		NewAccount  string `json:"newAccount"`
		NewOrder    string `json:"newOrder"`
		RenewalInfo string `json:"renewalInfo"`
	}
	mu     sync.Mutex
	nonces []string
}

// maxNonces bounds the pool: a restart of weir forgets every nonce, and
// a badNonce answer carries a fresh one.
const maxNonces = 4096

// newACMEConn reads the directory at dirURL.
func newACMEConn(ctx context.Context, hc *http.Client, dirURL string) (*acmeConn, error) {
	c := &acmeConn{hc: hc}
	res, err := c.do(ctx, http.MethodGet, dirURL, nil)
	if err != nil {
		return nil, err
	}
	if res.status != http.StatusOK {
		return nil, fmt.Errorf("directory: %d", res.status)
	}
	if err := json.Unmarshal(res.body, &c.dir); err != nil {
		return nil, fmt.Errorf("directory: %w", err)
	}
	if c.dir.NewNonce == "" || c.dir.NewAccount == "" || c.dir.NewOrder == "" || c.dir.RenewalInfo == "" {
		return nil, fmt.Errorf("directory lacks newNonce, newAccount, newOrder or renewalInfo: %s", res.body)
	}
	return c, nil
}

// acmeResponse is a response read whole.
type acmeResponse struct {
	status int
	header http.Header
	body   []byte
}

// acmeError is a problem document (RFC 8555 §6.7) with its status, the
// limit a 429 names (its "limit" member, docs/rate-limits.md) and the
// response's Retry-After (0 without one).
type acmeError struct {
	Status     int
	Type       string `json:"type"`
	Detail     string `json:"detail"`
	Limit      string `json:"limit"`
	RetryAfter time.Duration
}

func (e *acmeError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, strings.TrimPrefix(e.Type, "urn:ietf:params:acme:error:"), e.Detail)
}

// is reports whether e has the ACME error type name (badNonce, ...).
func (e *acmeError) is(name string) bool { return e.Type == "urn:ietf:params:acme:error:"+name }

// retryAfter reads a Retry-After in whole seconds (an HTTP date is read
// too); 0 when absent.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t))
	}
	return 0
}

// do sends one request and reads the response whole, keeping its nonce.
func (c *acmeConn) do(ctx context.Context, method, url string, body []byte) (*acmeResponse, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/jose+json")
	}
	req.Header.Set("User-Agent", "weir-load-fleet")
	res, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if n := res.Header.Get("Replay-Nonce"); n != "" {
		c.putNonce(n)
	}
	return &acmeResponse{status: res.StatusCode, header: res.Header, body: b}, nil
}

func (c *acmeConn) putNonce(n string) {
	c.mu.Lock()
	if len(c.nonces) < maxNonces {
		c.nonces = append(c.nonces, n)
	}
	c.mu.Unlock()
}

// nonce takes the freshest pooled nonce, or asks new-nonce for one.
func (c *acmeConn) nonce(ctx context.Context) (string, error) {
	c.mu.Lock()
	if n := len(c.nonces); n > 0 {
		v := c.nonces[n-1]
		c.nonces = c.nonces[:n-1]
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	res, err := c.do(ctx, http.MethodHead, c.dir.NewNonce, nil)
	if err != nil {
		return "", err
	}
	n := res.header.Get("Replay-Nonce")
	if n == "" {
		return "", fmt.Errorf("new-nonce: %d without Replay-Nonce", res.status)
	}
	return n, nil
}

// dropNonces forgets the pool (after a restart of weir every pooled
// nonce is refused).
func (c *acmeConn) dropNonces() {
	c.mu.Lock()
	c.nonces = c.nonces[:0]
	c.mu.Unlock()
}

// fleetAccount is an ACME account: its key, its URL (the kid) and the
// thumbprint of its key (for http-01's key authorization).
type fleetAccount struct {
	key   *ecdsa.PrivateKey
	jwk   []byte // the public JWK, members in lexicographic order
	thumb string
	kid   string
}

func newFleetAccountKey() (*fleetAccount, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	pub, err := key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		return nil, err
	}
	b64 := base64.RawURLEncoding.EncodeToString
	jwk := fmt.Sprintf(`{"crv":"P-256","kty":"EC","x":%q,"y":%q}`, b64(pub[1:33]), b64(pub[33:65]))
	sum := sha256.Sum256([]byte(jwk))
	return &fleetAccount{key: key, jwk: []byte(jwk), thumb: b64(sum[:])}, nil
}

// sign makes a flattened JWS of payload for url: with the account's kid,
// or its JWK when it has none yet. A nil payload is a POST-as-GET.
func (a *fleetAccount) sign(nonce, url string, payload []byte) ([]byte, error) {
	var hdr bytes.Buffer
	fmt.Fprintf(&hdr, `{"alg":"ES256","nonce":%q,"url":%q,`, nonce, url)
	if a.kid != "" {
		fmt.Fprintf(&hdr, `"kid":%q}`, a.kid)
	} else {
		fmt.Fprintf(&hdr, `"jwk":%s}`, a.jwk)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	protected, pl := b64(hdr.Bytes()), b64(payload)
	digest := sha256.Sum256([]byte(protected + "." + pl))
	r, s, err := ecdsa.Sign(rand.Reader, a.key, digest[:])
	if err != nil {
		return nil, err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return json.Marshal(map[string]string{"protected": protected, "payload": pl, "signature": b64(sig)})
}

// post signs payload for url and sends it, taking a fresh nonce and
// sending again after a badNonce (at most 5 times). A status of 400 or
// more is an *acmeError.
func (c *acmeConn) post(ctx context.Context, a *fleetAccount, url string, payload []byte) (*acmeResponse, error) {
	for attempt := 0; ; attempt++ {
		n, err := c.nonce(ctx)
		if err != nil {
			return nil, err
		}
		body, err := a.sign(n, url, payload)
		if err != nil {
			return nil, err
		}
		res, err := c.do(ctx, http.MethodPost, url, body)
		if err != nil {
			return nil, err
		}
		if res.status < 400 {
			return res, nil
		}
		pe := problemOf(res)
		if pe.is("badNonce") && attempt < 5 {
			continue
		}
		return res, pe
	}
}

// problemOf reads the problem of an error response.
func problemOf(res *acmeResponse) *acmeError {
	pe := &acmeError{Status: res.status, RetryAfter: retryAfter(res.header)}
	if json.Unmarshal(res.body, pe) != nil || pe.Type == "" {
		pe.Type, pe.Detail = "http", strings.TrimSpace(trunc(string(res.body), 120))
	}
	return pe
}

// register creates the account of a on the server.
func (c *acmeConn) register(ctx context.Context, a *fleetAccount) error {
	res, err := c.post(ctx, a, c.dir.NewAccount, []byte(`{"termsOfServiceAgreed":true}`))
	if err != nil {
		return fmt.Errorf("new-account: %w", err)
	}
	if a.kid = res.header.Get("Location"); a.kid == "" {
		return errors.New("new-account: no Location")
	}
	return nil
}

// acmeOrder is the part of an order the fleet reads.
type acmeOrder struct {
	URL            string   `json:"-"`
	Status         string   `json:"status"`
	Authorizations []string `json:"authorizations"`
	Finalize       string   `json:"finalize"`
	Certificate    string   `json:"certificate"`
	Replaces       string   `json:"replaces"`
}

// newOrder asks for an order for name, replacing the certificate
// replaces unless it is "".
func (c *acmeConn) newOrder(ctx context.Context, a *fleetAccount, name, replaces string) (*acmeOrder, error) {
	req := map[string]any{"identifiers": []map[string]string{{"type": "dns", "value": name}}}
	if replaces != "" {
		req["replaces"] = replaces
	}
	payload, _ := json.Marshal(req)
	res, err := c.post(ctx, a, c.dir.NewOrder, payload)
	if err != nil {
		return nil, err
	}
	o := &acmeOrder{URL: res.header.Get("Location")}
	if err := json.Unmarshal(res.body, o); err != nil || o.URL == "" {
		return nil, fmt.Errorf("new-order: unreadable answer (%v): %s", err, trunc(string(res.body), 120))
	}
	return o, nil
}

// getOrder reads an order (POST-as-GET).
func (c *acmeConn) getOrder(ctx context.Context, a *fleetAccount, url string) (*acmeOrder, time.Duration, error) {
	res, err := c.post(ctx, a, url, nil)
	if err != nil {
		return nil, 0, err
	}
	o := &acmeOrder{URL: url}
	if err := json.Unmarshal(res.body, o); err != nil {
		return nil, 0, fmt.Errorf("order: %w", err)
	}
	return o, retryAfter(res.header), nil
}

// acmeAuthz is the part of an authorization the fleet reads.
type acmeAuthz struct {
	Status     string `json:"status"`
	Challenges []struct {
		Type   string `json:"type"`
		URL    string `json:"url"`
		Token  string `json:"token"`
		Status string `json:"status"`
	} `json:"challenges"`
}

func (c *acmeConn) getAuthz(ctx context.Context, a *fleetAccount, url string) (*acmeAuthz, error) {
	res, err := c.post(ctx, a, url, nil)
	if err != nil {
		return nil, err
	}
	z := &acmeAuthz{}
	if err := json.Unmarshal(res.body, z); err != nil {
		return nil, fmt.Errorf("authz: %w", err)
	}
	return z, nil
}

// renewalInfo GETs the ARI resource of certID (RFC 9773 §4.2): its
// suggested window and the Retry-After of the next poll.
func (c *acmeConn) renewalInfo(ctx context.Context, certID string) (start, end time.Time, ra time.Duration, err error) {
	res, err := c.do(ctx, http.MethodGet, strings.TrimSuffix(c.dir.RenewalInfo, "/")+"/"+certID, nil)
	if err != nil {
		return start, end, 0, err
	}
	if res.status != http.StatusOK {
		return start, end, 0, problemOf(res)
	}
	var v struct {
		SuggestedWindow struct{ Start, End time.Time } `json:"suggestedWindow"`
	}
	if err := json.Unmarshal(res.body, &v); err != nil {
		return start, end, 0, fmt.Errorf("renewal-info: %w", err)
	}
	return v.SuggestedWindow.Start, v.SuggestedWindow.End, retryAfter(res.header), nil
}
