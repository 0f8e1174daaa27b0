// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/ca"
)

// The ACME problem types the tests look for.
const (
	probBadNonce       = "urn:ietf:params:acme:error:badNonce"
	probServerInternal = "urn:ietf:params:acme:error:serverInternal"
	probRateLimited    = "urn:ietf:params:acme:error:rateLimited"
)

// record is one request as the client saw it: a response, or a transport
// error.
type record struct {
	at         time.Time
	method     string
	path       string
	replica    string // the listener the connection reached
	status     int
	problem    string // the problem type, for application/problem+json
	badBody    string // why a problem document could not be read
	retryAfter string // the Retry-After header
	hasRA      bool
	ctype      string
	err        string // the transport error
}

// recorder keeps every record of a cluster's clients.
type recorder struct {
	mu   sync.Mutex
	recs []record
}

func (r *recorder) add(rec record) {
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	r.mu.Unlock()
}

// since returns the records made at or after t.
func (r *recorder) since(t time.Time) []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []record
	for _, rec := range r.recs {
		if !rec.at.Before(t) {
			out = append(out, rec)
		}
	}
	return out
}

func (r *recorder) all() []record { return r.since(time.Time{}) }

// recordingTransport records every response (status, problem type,
// Retry-After, the replica it came from) and every transport error of
// base, and sets X-Forwarded-For when xff is not empty.
type recordingTransport struct {
	base http.RoundTripper
	rec  *recorder
	xff  string
}

func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var remote atomic.Value
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		remote.Store(info.Conn.RemoteAddr().String())
	}}
	req = req.Clone(httptrace.WithClientTrace(req.Context(), trace))
	if rt.xff != "" {
		req.Header.Set("X-Forwarded-For", rt.xff)
	}
	res, err := rt.base.RoundTrip(req)
	rec := record{at: time.Now(), method: req.Method, path: req.URL.Path}
	if s, ok := remote.Load().(string); ok {
		rec.replica = s
	}
	if err != nil {
		rec.err = err.Error()
		rt.rec.add(rec)
		return nil, err
	}
	rec.status = res.StatusCode
	rec.retryAfter = res.Header.Get("Retry-After")
	_, rec.hasRA = res.Header["Retry-After"]
	rec.ctype = res.Header.Get("Content-Type")
	if strings.HasPrefix(rec.ctype, "application/problem+json") && req.Method != http.MethodHead {
		b, rerr := io.ReadAll(res.Body)
		res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(b))
		var p struct {
			Type string `json:"type"`
		}
		switch {
		case rerr != nil:
			rec.badBody = "reading the body: " + rerr.Error()
		case json.Unmarshal(b, &p) != nil:
			rec.badBody = fmt.Sprintf("not JSON: %.200q", b)
		case p.Type == "":
			rec.badBody = fmt.Sprintf("no type: %.200q", b)
		default:
			rec.problem = p.Type
		}
	}
	rt.rec.add(rec)
	return res, nil
}

// kind classifies a record for the reports: "ok" for a success, else
// what went wrong.
func (r record) kind() string {
	switch {
	case r.err != "":
		return "transport error"
	case r.status < 400:
		return "ok"
	case r.problem != "":
		ra := ""
		if r.hasRA {
			ra = " +Retry-After"
		}
		return fmt.Sprintf("%d %s%s", r.status, strings.TrimPrefix(r.problem, "urn:ietf:params:acme:error:"), ra)
	case r.badBody != "":
		return fmt.Sprintf("%d unparseable problem", r.status)
	default:
		ra := ""
		if r.hasRA {
			ra = " +Retry-After"
		}
		return fmt.Sprintf("%d %s %s%s", r.status, r.method, r.ctype, ra)
	}
}

// retryable says whether a client may simply retry r: a success, a
// badNonce, or a 5xx serverInternal with a Retry-After (a HEAD, which
// has no body, qualifies with a 503 and Retry-After). Transport errors,
// a 5xx without Retry-After, any other problem and an unparseable
// response are not.
func (r record) retryable() bool {
	switch {
	case r.err != "":
		return false
	case r.status < 400:
		return true
	case r.problem == probBadNonce:
		return true
	case r.status >= 500 && r.problem == probServerInternal && r.hasRA:
		return true
	case r.method == http.MethodHead && r.status == http.StatusServiceUnavailable && r.hasRA:
		return true
	}
	return false
}

// kinds counts records by kind, in a stable order.
func kinds(recs []record) string {
	ks := make([]string, len(recs))
	for i, r := range recs {
		ks[i] = r.kind()
	}
	return tally(ks, "%s: %d", "; ")
}

// tally counts each distinct string of ss and prints them sorted, each
// with format (the string, then its count), joined by sep.
func tally(ss []string, format, sep string) string {
	m := map[string]int{}
	for _, s := range ss {
		m[s]++
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf(format, k, m[k])
	}
	return strings.Join(parts, sep)
}

// newKey makes an ECDSA P-256 key.
func newKey() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

// backoff is the x/crypto/acme retry policy of the tests' clients: it
// honours Retry-After up to 2 s, retries at most 30 times, and gives a
// 429 up at once (the limits are the subject of other checks).
func backoff(n int, _ *http.Request, res *http.Response) time.Duration {
	if n > 30 || res.StatusCode == http.StatusTooManyRequests {
		return -1
	}
	d := 250 * time.Millisecond * time.Duration(n)
	if v := res.Header.Get("Retry-After"); v != "" {
		var secs int
		if _, err := fmt.Sscanf(v, "%d", &secs); err == nil {
			d = time.Duration(secs) * time.Second
		}
	}
	return min(max(d, 100*time.Millisecond), 2*time.Second)
}

// acmeClient returns an x/crypto/acme client of cl's for a new key,
// through hc (cl.lb when nil).
func (cl *cluster) acmeClient(hc *http.Client) *xacme.Client {
	if hc == nil {
		hc = cl.lb
	}
	return &xacme.Client{Key: newKey(), DirectoryURL: cl.base + "/directory", HTTPClient: hc,
		UserAgent: "weir-ha-test", RetryBackoff: backoff}
}

// issued is a certificate a client received.
type issued struct {
	serial string
	chain  [][]byte
	names  []string
	order  string
}

// issue takes an order for names through c to a certificate: http-01
// for every authorization, polled every 200 ms, then finalize.
func (cl *cluster) issue(ctx context.Context, c *xacme.Client, names []string) (*issued, error) {
	o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs(names...))
	if err != nil {
		return nil, fmt.Errorf("new-order: %w", err)
	}
	if err := cl.authorize(ctx, c, o); err != nil {
		return nil, err
	}
	o, err = pollOrder(ctx, c, o.URI)
	if err != nil {
		return nil, err
	}
	chain, leaf, err := finalizeOrder(ctx, c, o, names)
	if err != nil {
		return nil, err
	}
	return &issued{serial: ca.SerialHex(leaf.SerialNumber), chain: chain, names: names, order: o.URI}, nil
}

// finalizeOrder finalizes the ready order o for names with a CSR of a
// new key and returns the chain and its leaf.
func finalizeOrder(ctx context.Context, c *xacme.Client, o *xacme.Order, names []string) ([][]byte, *x509.Certificate, error) {
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{DNSNames: names}, newKey())
	if err != nil {
		return nil, nil, err
	}
	chain, _, err := c.CreateOrderCert(ctx, o.FinalizeURL, csr, true)
	if err != nil {
		return nil, nil, fmt.Errorf("finalize %s: %w", o.URI, err)
	}
	if len(chain) == 0 {
		return nil, nil, errors.New("finalize: no certificate")
	}
	leaf, err := x509.ParseCertificate(chain[0])
	return chain, leaf, err
}

// authorize answers the http-01 challenge of every authorization of o
// and waits until each is valid.
func (cl *cluster) authorize(ctx context.Context, c *xacme.Client, o *xacme.Order) error {
	for _, u := range o.AuthzURLs {
		a, err := c.GetAuthorization(ctx, u)
		if err != nil {
			return fmt.Errorf("authorization: %w", err)
		}
		if a.Status == xacme.StatusValid {
			continue
		}
		ch := challengeOf(a, "http-01")
		if ch == nil {
			return fmt.Errorf("authorization %s has no http-01 challenge", u)
		}
		ka, err := c.HTTP01ChallengeResponse(ch.Token)
		if err != nil {
			return err
		}
		cl.resp.set(ch.Token, ka)
		if _, err := c.Accept(ctx, ch); err != nil {
			return fmt.Errorf("accept: %w", err)
		}
	}
	for _, u := range o.AuthzURLs {
		if err := pollAuthz(ctx, c, u); err != nil {
			return err
		}
	}
	return nil
}

// challengeOf returns the challenge of type typ of a, nil if none.
func challengeOf(a *xacme.Authorization, typ string) *xacme.Challenge {
	for _, x := range a.Challenges {
		if x.Type == typ {
			return x
		}
	}
	return nil
}

// http01 returns the http-01 challenge of the authorization at u.
func http01(ctx context.Context, c *xacme.Client, u string) (*xacme.Challenge, error) {
	a, err := c.GetAuthorization(ctx, u)
	if err != nil {
		return nil, err
	}
	ch := challengeOf(a, "http-01")
	if ch == nil {
		return nil, fmt.Errorf("authorization %s has no http-01 challenge", u)
	}
	return ch, nil
}

// pollAuthz polls an authorization every 200 ms until it is valid.
func pollAuthz(ctx context.Context, c *xacme.Client, u string) error {
	for {
		a, err := c.GetAuthorization(ctx, u)
		if err != nil {
			return fmt.Errorf("authorization: %w", err)
		}
		switch a.Status {
		case xacme.StatusValid:
			return nil
		case xacme.StatusInvalid, xacme.StatusDeactivated, xacme.StatusExpired, xacme.StatusRevoked:
			return fmt.Errorf("authorization %s is %s", u, a.Status)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("authorization %s still %s: %w", u, a.Status, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// pollOrder polls an order every 200 ms until it is ready or valid.
func pollOrder(ctx context.Context, c *xacme.Client, u string) (*xacme.Order, error) {
	for {
		o, err := c.GetOrder(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("order: %w", err)
		}
		switch o.Status {
		case xacme.StatusReady, xacme.StatusValid:
			return o, nil
		case xacme.StatusInvalid:
			return nil, fmt.Errorf("order %s is invalid: %v", u, o.Error)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("order %s still %s: %w", u, o.Status, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// verify checks a chain: leaf and intermediate, the leaf chaining to
// weir's root, with exactly the order's names.
func (cl *cluster) verify(is *issued) error {
	if len(is.chain) != 2 {
		return fmt.Errorf("chain of %d certificates, want leaf and intermediate", len(is.chain))
	}
	leaf, err := x509.ParseCertificate(is.chain[0])
	if err != nil {
		return err
	}
	inter, err := x509.ParseCertificate(is.chain[1])
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AddCert(inter)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: cl.roots, Intermediates: pool, DNSName: is.names[0]}); err != nil {
		return fmt.Errorf("serial %s does not verify to weir's root: %w", is.serial, err)
	}
	got := append([]string(nil), leaf.DNSNames...)
	want := append([]string(nil), is.names...)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		return fmt.Errorf("serial %s names %v, want %v", is.serial, got, want)
	}
	return nil
}

// rawResponse is the answer to a hand-made request.
type rawResponse struct {
	status  int
	header  http.Header
	body    []byte
	problem struct {
		Type, Detail string
	}
}

// nonce fetches a fresh nonce through hc.
func (cl *cluster) nonce(ctx context.Context, hc *http.Client) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, cl.base+"/acme/new-nonce", nil)
	if err != nil {
		return "", err
	}
	res, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	res.Body.Close()
	n := res.Header.Get("Replay-Nonce")
	if n == "" {
		return "", fmt.Errorf("new-nonce: %d without a nonce", res.StatusCode)
	}
	return n, nil
}

// signJWS makes a flattened JWS over payload for url: kid form when kid
// is set, else with the JWK embedded.
func signJWS(key crypto.Signer, kid, nonce, url string, payload []byte) ([]byte, error) {
	opts := &jose.SignerOptions{ExtraHeaders: map[jose.HeaderKey]any{"nonce": nonce, "url": url}}
	sk := jose.SigningKey{Algorithm: jose.ES256, Key: key}
	if kid != "" {
		sk.Key = jose.JSONWebKey{Key: key, KeyID: kid}
	} else {
		opts.EmbedJWK = true
	}
	s, err := jose.NewSigner(sk, opts)
	if err != nil {
		return nil, err
	}
	jws, err := s.Sign(payload)
	if err != nil {
		return nil, err
	}
	return []byte(jws.FullSerialize()), nil
}

// postRaw posts a signed body through hc.
func postRaw(ctx context.Context, hc *http.Client, url string, body []byte) (*rawResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/jose+json")
	res, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	r := &rawResponse{status: res.StatusCode, header: res.Header, body: b}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/problem+json") {
		_ = json.Unmarshal(b, &r.problem)
	}
	return r, nil
}

// orderPayload is a new-order body for names.
func orderPayload(names ...string) []byte {
	var ids []map[string]string
	for _, n := range names {
		ids = append(ids, map[string]string{"type": "dns", "value": n})
	}
	b, _ := json.Marshal(map[string]any{"identifiers": ids})
	return b
}
