// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"net/netip"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// ExplainView is the prediction for a new order.
type ExplainView struct {
	Account     string            `json:"account"`
	Identifiers []acme.Identifier `json:"identifiers"`
	// Allowed reports that the order would pass every limit now.
	Allowed bool `json:"allowed"`
	// Problem is set when the order would be refused before the limiter.
	Problem *ProblemView `json:"problem,omitempty"`
	// Limit, Key and RetryAfter describe the strictest denial; PassesAt is
	// when the order would pass (the strictest denial's end).
	Limit        string     `json:"limit,omitempty"`
	Key          string     `json:"key,omitempty"`
	RetryAfter   string     `json:"retry_after,omitempty"`
	RetryAfterMS int64      `json:"retry_after_ms,omitempty"`
	PassesAt     *time.Time `json:"passes_at,omitempty"`
	Never        bool       `json:"never,omitempty"`
	Detail       string     `json:"detail,omitempty"`
	// Denied lists every bucket that would refuse.
	Denied      []DeniedView `json:"denied,omitempty"`
	FreshAuthzs int          `json:"new_authorizations"`
}

// DeniedView is one bucket that would refuse.
type DeniedView struct {
	Bucket     string    `json:"bucket"`
	Limit      string    `json:"limit"`
	Key        string    `json:"key"`
	RetryAfter string    `json:"retry_after"`
	PassesAt   time.Time `json:"passes_at"`
	Never      bool      `json:"never,omitempty"`
}

// Explain predicts what a new order of account for names would meet now.
func (s *Server) Explain(ctx context.Context, account string, names []string) (*ExplainView, error) {
	var idents []acme.Identifier
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		t := acme.IdentifierDNS
		if _, err := netip.ParseAddr(n); err == nil {
			t = acme.IdentifierIP
		}
		idents = append(idents, acme.Identifier{Type: t, Value: n})
	}
	if account == "" || len(idents) == 0 {
		return nil, badRequest("name an account and at least one name")
	}
	ex, err := s.cfg.Service.ExplainNewOrder(ctx, acme.AccountID(account), acme.NewOrderRequest{Identifiers: idents})
	if err != nil {
		return nil, err
	}
	v := &ExplainView{Account: account, Identifiers: ex.Identifiers, FreshAuthzs: ex.FreshAuthzs}
	if ex.Problem != nil {
		v.Problem = &ProblemView{Type: string(ex.Problem.Type), Detail: ex.Problem.Detail}
		return v, nil
	}
	d := ex.Decision
	v.Allowed = d.Allowed
	if d.Allowed {
		return v, nil
	}
	v.Limit, v.Key, v.Never, v.Detail = d.Limit.String(), d.Key, d.Never, d.Detail()
	if !d.Never {
		passes := d.At.Add(d.RetryAfter).UTC()
		v.PassesAt, v.RetryAfter, v.RetryAfterMS = &passes, d.RetryAfter.Round(time.Millisecond).String(), d.RetryAfter.Milliseconds()
	}
	for _, sub := range d.Denied {
		v.Denied = append(v.Denied, DeniedView{
			Bucket: ratelimit.BucketKey(sub.Limit, sub.Key), Limit: sub.Limit.String(), Key: sub.Key,
			RetryAfter: sub.RetryAfter.Round(time.Millisecond).String(), PassesAt: sub.At.Add(sub.RetryAfter).UTC(), Never: sub.Never,
		})
	}
	return v, nil
}
