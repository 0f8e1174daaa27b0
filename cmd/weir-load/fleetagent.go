// SPDX-License-Identifier: Apache-2.0

// One simulated client of the fleet: it holds a certificate, polls its
// renewalInfo as RFC 9773 §4.3 asks, renews with replaces at a uniformly
// random time of the suggested window, and waits out every 429 for its
// Retry-After, counting what happened to it in the fleet's minutes.

package main

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/acme"
)

// simClient is one host of the fleet with one DNS name.
type simClient struct {
	f    *fleet
	name string
	acct *fleetAccount
	csr  []byte // DER, made once: the name and the fleet's certificate key

	// The certificate in hand, read by the fleet's watcher.
	certID    string                 // the client's own goroutine only
	heldID    atomic.Pointer[string] // certID, for the other goroutines
	notAfter  atomic.Int64           // Unix nanoseconds; 0 before the first
	issuer    atomic.Int32           // issuerA, issuerB, issuerOther; 0 before the first
	lapsedFor atomic.Int64           // the notAfter whose lapse was counted

	// pending is an order created but not yet turned into a certificate
	// (a connection lost, a restart of weir): it is taken up again rather
	// than replaced, since its replaces cannot be sent twice.
	pending *acmeOrder
	backoff time.Duration
	trace   io.Writer // -fleet-trace: this client's decisions; nil for none
}

// tracef logs one of the client's decisions under -fleet-trace.
func (c *simClient) tracef(format string, args ...any) {
	if c.trace != nil {
		logf(c.trace, "%s: "+format, append([]any{c.name}, args...)...)
	}
}

// Issuer labels of a certificate in hand.
const (
	issuerNone int32 = iota
	issuerA
	issuerB
	issuerOther
)

// run is the client's life: its first certificate at startAt, then
// poll, wait, renew, until ctx ends.
func (c *simClient) run(ctx context.Context, startAt time.Time) {
	if !sleepUntil(ctx, startAt) {
		return
	}
	leaf := c.obtain(ctx, "")
	if leaf == nil {
		return
	}
	c.hold(leaf)
	c.f.stats.add(func(m *fleetMinute) { m.Issued++ })
	c.f.stats.cert(false)
	var pickStart, pickEnd, pick time.Time
	picked := false // a time is chosen for the certificate in hand
	for ctx.Err() == nil {
		start, end, ra, err := c.f.conn.renewalInfo(ctx, c.certID)
		if pe := (*acmeError)(nil); errors.As(err, &pe) && pe.Status == http.StatusTooManyRequests {
			c.limited(ctx, pe)
			continue
		}
		if err != nil {
			c.failed(ctx, "renewal-info", err)
			continue
		}
		c.backoff = 0
		c.f.stats.add(func(m *fleetMinute) { m.Polls++ })
		// RFC 9773 §4.3: a uniformly random time within the window, kept
		// while the window of the certificate in hand stays where it is.
		if !picked || !start.Equal(pickStart) || !end.Equal(pickEnd) {
			picked = true
			pickStart, pickEnd = start, end
			pick = start
			if span := end.Sub(start); span > 0 {
				pick = start.Add(time.Duration(rand.Int64N(int64(span))))
			}
		}
		now := time.Now()
		next := now.Add(clampPoll(ra))
		c.tracef("renewalInfo %s: window %s to %s, Retry-After %s; renewal time %s; notAfter %s", c.certID, hhmmss(start), hhmmss(end), ra, hhmmss(pick), hhmmss(time.Unix(0, c.notAfter.Load())))
		if pick.After(now) {
			if pick.After(next) { // poll again first: the window can move
				c.tracef("polling again at %s", hhmmss(next))
				sleepUntil(ctx, next)
				continue
			}
			c.tracef("renewing at %s", hhmmss(pick))
			if !sleepUntil(ctx, pick) {
				return
			}
		}
		from := c.issuer.Load()
		leaf := c.obtain(ctx, c.certID)
		if leaf == nil {
			return
		}
		c.hold(leaf)
		picked = false
		to := c.issuer.Load()
		c.tracef("renewed: %s, issuer %d, notAfter %s", c.certID, to, hhmmss(leaf.NotAfter))
		c.f.stats.cert(true)
		c.f.stats.add(func(m *fleetMinute) {
			m.Renewals++
			if to == issuerB {
				m.RenewalsToB++
				if from == issuerA {
					m.MovedAToB++
				}
			}
		})
	}
}

// clampPoll bounds a renewalInfo Retry-After as RFC 9773 §4.3 suggests
// clients do: at least a second here (the drill's lifetimes are minutes),
// at most a day.
func clampPoll(ra time.Duration) time.Duration {
	return min(max(ra, time.Second), 24*time.Hour)
}

// hold makes leaf the certificate in hand.
func (c *simClient) hold(leaf *x509.Certificate) {
	c.certID = acme.CertID(leaf)
	id := c.certID
	c.heldID.Store(&id)
	c.issuer.Store(c.f.issuers.label(leaf.AuthorityKeyId))
	c.notAfter.Store(leaf.NotAfter.UnixNano())
}

// obtain gets a certificate for the client's name, replacing replaces
// (the certificate in hand) unless it is "": it tries until it has one
// or ctx ends (nil), waiting out a 429 for its Retry-After and backing off
// after any other failure.
func (c *simClient) obtain(ctx context.Context, replaces string) *x509.Certificate {
	for ctx.Err() == nil {
		leaf, err := c.order(ctx, replaces)
		if err == nil {
			c.backoff = 0
			return leaf
		}
		var pe *acmeError
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &pe) && pe.Status == http.StatusTooManyRequests:
			c.limited(ctx, pe)
		case errors.As(err, &pe) && pe.is("alreadyReplaced"):
			// An order with this replaces exists whose answer was lost:
			// renew without ARI's replaces (paying the account's limits).
			c.f.stats.add(func(m *fleetMinute) { m.AlreadyReplaced++ })
			replaces = ""
		default:
			c.failed(ctx, "order", err)
		}
	}
	return nil
}

// limited records a 429 (the limit it names, marked (first) for a first
// certificate's order, and whether its Retry-After reaches past the
// certificate in hand's expiry) and waits it out.
func (c *simClient) limited(ctx context.Context, pe *acmeError) {
	ra := max(pe.RetryAfter, time.Second)
	na := c.notAfter.Load()
	past := na != 0 && time.Now().Add(ra).UnixNano() > na
	limit := pe.Limit
	if limit == "" {
		limit = "(unnamed)"
	}
	if na == 0 { // a first certificate's order pays every account limit
		limit += " (first)"
	}
	c.f.stats.add(func(m *fleetMinute) {
		if m.Limited == nil {
			m.Limited = map[string]int{}
		}
		m.Limited[limit]++
		if past {
			m.LimitedPastExpiry++
		}
	})
	c.tracef("429 %s, Retry-After %s, past expiry %v", limit, ra, past)
	if past {
		c.f.stats.note(fmt.Sprintf("%s: %s limit's Retry-After %s reaches past its notAfter %s", c.name, limit, ra, time.Unix(0, na).UTC().Format(time.TimeOnly)))
	}
	sleepUntil(ctx, time.Now().Add(ra+time.Duration(rand.Int64N(int64(time.Second)))))
}

// failed records an error other than a 429 and backs off: 1 s doubling
// to 16 s, with jitter (a restart of weir refuses connections for a few
// seconds), or the error's Retry-After when that is longer.
func (c *simClient) failed(ctx context.Context, what string, err error) {
	kind := what + ": " + errKindOf(err)
	c.tracef("error: %s", kind)
	c.f.stats.add(func(m *fleetMinute) { m.Errors++ })
	c.f.stats.errKind(kind)
	c.backoff = min(max(2*c.backoff, time.Second), 16*time.Second)
	wait := c.backoff/2 + time.Duration(rand.Int64N(int64(c.backoff/2)))
	var pe *acmeError
	if errors.As(err, &pe) {
		wait = max(wait, pe.RetryAfter) // a 503's Retry-After
	}
	sleepUntil(ctx, time.Now().Add(wait))
}

// errKindOf shortens an error for the error histogram.
func errKindOf(err error) string {
	var pe *acmeError
	if errors.As(err, &pe) {
		return trunc(pe.Error(), 100)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	var ue *url.Error // without its URL, which names the certificate or order
	if errors.As(err, &ue) {
		return trunc(ue.Op+": "+ue.Err.Error(), 100)
	}
	return trunc(err.Error(), 100)
}

// order makes one attempt at a certificate: a new order (or the pending
// one), its authorization if it needs one, finalize, the chain.
func (c *simClient) order(ctx context.Context, replaces string) (*x509.Certificate, error) {
	conn, o := c.f.conn, c.pending
	if o == nil {
		var err error
		if o, err = conn.newOrder(ctx, c.acct, c.name, replaces); err != nil {
			return nil, err
		}
		c.pending = o
	} else {
		got, _, err := conn.getOrder(ctx, c.acct, o.URL)
		var pe *acmeError
		if errors.As(err, &pe) && pe.Status == http.StatusNotFound {
			c.pending = nil
		}
		if err != nil {
			return nil, err
		}
		o = got
	}
	var ra time.Duration
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		var err error
		switch o.Status {
		case "pending":
			for _, u := range o.Authorizations {
				if err := c.solve(ctx, u); err != nil {
					return nil, err
				}
			}
			o, ra, err = conn.getOrder(ctx, c.acct, o.URL)
		case "ready":
			payload, _ := json.Marshal(map[string]string{"csr": base64.RawURLEncoding.EncodeToString(c.csr)})
			var res *acmeResponse
			if res, err = conn.post(ctx, c.acct, o.Finalize, payload); err == nil {
				url := o.URL
				o = &acmeOrder{URL: url}
				err = json.Unmarshal(res.body, o)
				ra = retryAfter(res.header)
			}
		case "processing":
			sleepUntil(ctx, time.Now().Add(min(max(ra, 100*time.Millisecond), 2*time.Second)))
			o, ra, err = conn.getOrder(ctx, c.acct, o.URL)
		case "valid":
			leaf, err := c.download(ctx, o.Certificate)
			if err == nil {
				c.pending = nil
			}
			return leaf, err
		default: // invalid (or expired): start over
			c.pending = nil
			return nil, fmt.Errorf("order %s", o.Status)
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, errors.New("order: not valid within 3 minutes")
}

// solve completes the http-01 challenge of a pending authorization
// through the tool's responder and waits until it is valid.
func (c *simClient) solve(ctx context.Context, url string) error {
	conn := c.f.conn
	z, err := conn.getAuthz(ctx, c.acct, url)
	if err != nil || z.Status == "valid" {
		return err
	}
	if z.Status != "pending" {
		return fmt.Errorf("authz %s", z.Status)
	}
	var chURL, token string
	for _, ch := range z.Challenges {
		if ch.Type == "http-01" {
			chURL, token = ch.URL, ch.Token
		}
	}
	if chURL == "" {
		return errors.New("authz offers no http-01")
	}
	c.f.resp.keyAuths.Store(token, token+"."+c.acct.thumb)
	defer c.f.resp.keyAuths.Delete(token)
	if _, err := conn.post(ctx, c.acct, chURL, []byte("{}")); err != nil {
		return fmt.Errorf("challenge: %w", err)
	}
	wait := 50 * time.Millisecond
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		z, err := conn.getAuthz(ctx, c.acct, url)
		if err != nil {
			return err
		}
		switch z.Status {
		case "valid":
			return nil
		case "pending":
		default:
			return fmt.Errorf("authz became %s", z.Status)
		}
		if !sleepUntil(ctx, time.Now().Add(wait)) {
			return ctx.Err()
		}
		wait = min(2*wait, time.Second)
	}
	return errors.New("authz: not valid within 2 minutes")
}

// download fetches the chain and returns its leaf, checked to name the
// client's name.
func (c *simClient) download(ctx context.Context, url string) (*x509.Certificate, error) {
	if url == "" {
		return nil, errors.New("valid order without a certificate URL")
	}
	res, err := c.f.conn.post(ctx, c.acct, url, nil)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(res.body)
	if block == nil {
		return nil, errors.New("certificate: no PEM")
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != c.name {
		return nil, fmt.Errorf("certificate names %v, want %s", leaf.DNSNames, c.name)
	}
	return leaf, nil
}

// hhmmss is t's time of day in UTC, to the millisecond.
func hhmmss(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// sleepUntil waits until t or the end of ctx; false when ctx ended.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
