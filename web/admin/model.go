// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/ratelimit"
)

// The views below are what both the JSON API and the dashboard show; the
// CLI decodes the same JSON.

// BucketView is one limiter bucket.
type BucketView struct {
	// Bucket is the bucket key, "limit:key", as ratelimit reset takes it.
	Bucket    string     `json:"bucket"`
	Limit     string     `json:"limit"`
	Key       string     `json:"key"`
	Enabled   bool       `json:"enabled"`
	Override  bool       `json:"override,omitempty"`
	Describe  string     `json:"describe,omitempty"`
	Capacity  int64      `json:"capacity"`
	Remaining int64      `json:"remaining"`
	NextAt    *time.Time `json:"next_at,omitempty"`
	FullAt    *time.Time `json:"full_at,omitempty"`
	At        *time.Time `json:"at,omitempty"`
	// Names are the names of a duplicate-certificate bucket (dupnames.go).
	Names []string `json:"names,omitempty"`
}

// describeLimit says a limit in words, as the config sets it.
func describeLimit(l ratelimit.Limit) string {
	switch l.Kind() {
	case ratelimit.KindRate:
		return fmt.Sprintf("%d per %s, burst %d", l.Count, shortDuration(l.Period), l.Burst)
	case ratelimit.KindCount:
		if l.Window == 0 {
			return fmt.Sprintf("at most %d at once", l.Max)
		}
		return fmt.Sprintf("%d per %s window", l.Max, shortDuration(l.Window))
	}
	return ""
}

// shortDuration prints 1h0m0s as 1h and 168h0m0s as 168h.
func shortDuration(d time.Duration) string {
	s := d.String()
	for _, suf := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, suf) {
			s = strings.TrimSuffix(s, "0s")
			s = strings.TrimSuffix(s, "0m")
		}
	}
	return s
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func bucketView(st ratelimit.BucketStatus) BucketView {
	v := BucketView{
		Bucket: ratelimit.BucketKey(st.Name, st.Key), Limit: st.Name.String(), Key: st.Key,
		Enabled: st.Enabled, Override: st.Override,
	}
	if !st.Enabled {
		return v
	}
	v.Describe = describeLimit(st.Limit)
	v.Capacity, v.Remaining = st.Capacity, st.Remaining
	v.NextAt, v.FullAt, v.At = timePtr(st.NextAt), timePtr(st.FullAt), timePtr(st.At)
	return v
}

// StatusQuery selects buckets: exactly one of its fields.
type StatusQuery struct {
	Account string
	IP      string
	Key     string
}

// Status reads the buckets q selects, spending nothing.
func (s *Server) Status(ctx context.Context, q StatusQuery) ([]BucketView, error) {
	set := 0
	for _, v := range []string{q.Account, q.IP, q.Key} {
		if v != "" {
			set++
		}
	}
	if set != 1 {
		return nil, badRequest("name exactly one of account, ip or key")
	}
	var (
		reqs []ratelimit.Request
		out  []BucketView
	)
	switch {
	case q.Account != "":
		var err error
		if reqs, err = s.cfg.Service.AccountBuckets(ctx, acme.AccountID(q.Account)); err != nil {
			return nil, err
		}
	case q.IP != "":
		ip, err := netip.ParseAddr(q.IP)
		if err != nil {
			return nil, badRequest("ip %q is not an IP address", q.IP)
		}
		out = append(out, s.globalBucket(ip))
		reqs = ratelimit.AddressBuckets(ip)
	default:
		name, key, err := ratelimit.ParseBucketKey(q.Key)
		if err != nil {
			return nil, badRequest("%v", err)
		}
		if name == ratelimit.Global {
			ip, err := parseIPKey(key)
			if err != nil {
				return nil, badRequest("%v", err)
			}
			return []BucketView{s.globalBucket(ip)}, nil
		}
		reqs = []ratelimit.Request{{Name: name, Key: key}}
	}
	sts, err := s.cfg.Limits.Status(ctx, reqs...)
	if err != nil {
		return nil, err
	}
	for _, st := range sts {
		out = append(out, bucketView(st))
	}
	s.nameSets(ctx).fill(out)
	return out, nil
}

// parseIPKey reads an IPKey: an address or an IPv6 /64.
func parseIPKey(key string) (netip.Addr, error) {
	if p, err := netip.ParsePrefix(key); err == nil {
		return p.Addr(), nil
	}
	ip, err := netip.ParseAddr(key)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address or IPv6 /64", key)
	}
	return ip, nil
}

// globalBucket reads ip's bucket of the in-process global layer.
func (s *Server) globalBucket(ip netip.Addr) BucketView {
	v := BucketView{Bucket: ratelimit.BucketKey(ratelimit.Global, ratelimit.IPKey(ip)), Limit: ratelimit.Global.String(), Key: ratelimit.IPKey(ip)}
	if s.cfg.Edge == nil || !s.cfg.GlobalEnabled() {
		return v
	}
	now := s.cfg.Now().UTC()
	burst, emission := s.cfg.Edge.Limit()
	rem, full := s.cfg.Edge.Peek(ip, now.UnixMicro())
	v.Enabled, v.Capacity, v.Remaining = true, burst, rem
	v.Describe = fmt.Sprintf("burst %d, one token every %s (this replica)", burst, emission)
	fullAt := time.UnixMicro(full).UTC()
	v.FullAt, v.At = &fullAt, &now
	if rem == 0 {
		next := time.UnixMicro(max(full-(burst-1)*emission.Microseconds(), now.UnixMicro())).UTC()
		v.NextAt = &next
	}
	return v
}

// Reset makes the bucket with key ("limit:key") fresh.
func (s *Server) Reset(ctx context.Context, key string) error {
	name, k, err := ratelimit.ParseBucketKey(key)
	if err != nil {
		return badRequest("%v", err)
	}
	if name == ratelimit.Global {
		ip, err := parseIPKey(k)
		if err != nil {
			return badRequest("%v", err)
		}
		if s.cfg.Edge != nil {
			s.cfg.Edge.Forget(ip)
		}
	} else if err := s.cfg.Limits.Reset(ctx, key); err != nil {
		return err
	}
	s.logAction(ctx, "admin: rate limit bucket reset", "bucket", key)
	return nil
}

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

// LimitView is one configured limit.
type LimitView struct {
	Limit    string `json:"limit"`
	Enabled  bool   `json:"enabled"`
	Kind     string `json:"kind"`
	Describe string `json:"describe"`
}

// OverrideView is one per-bucket override.
type OverrideView struct {
	Bucket   string `json:"bucket"`
	Describe string `json:"describe"`
}

// LimitsView is the limiter's configuration.
type LimitsView struct {
	Limits    []LimitView    `json:"limits"`
	Overrides []OverrideView `json:"overrides"`
}

// Limits describes the configured limits.
func (s *Server) Limits() LimitsView {
	cfg := s.cfg.Limits.Policy()
	var v LimitsView
	for _, n := range ratelimit.Names() {
		v.Limits = append(v.Limits, LimitView{Limit: n.String(), Enabled: cfg.Enabled[n], Kind: n.Kind().String(), Describe: describeLimit(cfg.Limits[n])})
	}
	for k, l := range cfg.Overrides {
		v.Overrides = append(v.Overrides, OverrideView{Bucket: k, Describe: describeLimit(l)})
	}
	slices.SortFunc(v.Overrides, func(a, b OverrideView) int { return strings.Compare(a.Bucket, b.Bucket) })
	return v
}

// AccountView is an account as administrators see it.
type AccountView struct {
	ID            string    `json:"id"`
	Status        string    `json:"status"`
	Contact       []string  `json:"contact"`
	KeyThumbprint string    `json:"key_thumbprint"`
	CreatedAt     time.Time `json:"created_at"`
	CreatedIP     string    `json:"created_ip"`
}

func accountView(a *acme.Account) AccountView {
	c := a.Contact
	if c == nil {
		c = []string{}
	}
	return AccountView{ID: string(a.ID), Status: string(a.Status), Contact: c, KeyThumbprint: string(a.KeyThumbprint), CreatedAt: a.CreatedAt, CreatedIP: a.CreatedIP}
}

// OrderView is an order as administrators see it.
type OrderView struct {
	ID          string            `json:"id"`
	Account     string            `json:"account"`
	Status      string            `json:"status"`
	Identifiers []acme.Identifier `json:"identifiers"`
	CreatedAt   time.Time         `json:"created_at"`
	Expires     time.Time         `json:"expires"`
	Certificate string            `json:"certificate,omitempty"`
	Error       *ProblemView      `json:"error,omitempty"`
	// Replaces is the ARI identifier of the certificate the order renews.
	Replaces string `json:"replaces,omitempty"`
}

func orderView(o *acme.Order) OrderView {
	v := OrderView{ID: string(o.ID), Account: string(o.AccountID), Status: string(o.Status), Identifiers: o.Identifiers,
		CreatedAt: o.CreatedAt, Expires: o.Expires, Certificate: o.CertSerial, Replaces: o.Replaces}
	if o.Error != nil {
		v.Error = &ProblemView{Type: string(o.Error.Type), Detail: o.Error.Detail}
	}
	return v
}

// CRLView describes the current CRL.
type CRLView struct {
	Number     string     `json:"number"`
	ThisUpdate time.Time  `json:"this_update"`
	NextUpdate time.Time  `json:"next_update"`
	Issuer     string     `json:"issuer"`
	Entries    []CRLEntry `json:"entries"`
	URL        string     `json:"url,omitempty"`
}

// CRLEntry is one revoked certificate on the CRL.
type CRLEntry struct {
	Serial    string    `json:"serial"`
	RevokedAt time.Time `json:"revoked_at"`
	Reason    string    `json:"reason"`
}

// CRL describes the current CRL, the one the ACME listener serves: made
// anew when there is none yet or when a certificate was revoked since, by
// any replica.
func (s *Server) CRL(ctx context.Context) (*CRLView, []byte, error) {
	der, _, err := s.cfg.Service.CurrentCRL(ctx)
	if err != nil {
		return nil, nil, err
	}
	rl, err := x509.ParseRevocationList(der)
	if err != nil {
		return nil, nil, fmt.Errorf("admin: parsing the CRL: %w", err)
	}
	v := &CRLView{ThisUpdate: rl.ThisUpdate.UTC(), NextUpdate: rl.NextUpdate.UTC(), Issuer: rl.Issuer.String(), Entries: []CRLEntry{}}
	if rl.Number != nil {
		v.Number = rl.Number.String()
	}
	for _, e := range rl.RevokedCertificateEntries {
		v.Entries = append(v.Entries, CRLEntry{Serial: ca.SerialHex(e.SerialNumber), RevokedAt: e.RevocationTime.UTC(), Reason: ca.ReasonString(e.ReasonCode)})
	}
	return v, der, nil
}

// OverviewView is the dashboard's front page.
type OverviewView struct {
	Counts acme.Counts `json:"counts"`
	// Issuance counts certificates per hour over the last 48 hours,
	// oldest first, starting at IssuanceFrom.
	IssuanceFrom time.Time `json:"issuance_from"`
	IssuanceStep string    `json:"issuance_step"`
	Issuance     []int     `json:"issuance"`
	// CA expiry.
	RootExpires         *time.Time `json:"root_expires,omitempty"`
	IntermediateExpires time.Time  `json:"intermediate_expires"`
	Intermediate        string     `json:"intermediate"`
	// Denials counts 429s by limit since start (this replica).
	Denials map[string]uint64 `json:"denials_by_limit"`
	Config  ConfigInfo        `json:"-"`
}

// Overview gathers the front page.
func (s *Server) Overview(ctx context.Context) (*OverviewView, error) {
	inv, ok := s.cfg.Service.Inventory()
	if !ok {
		return nil, fmt.Errorf("admin: the store has no inventory")
	}
	now := s.cfg.Now().UTC()
	counts, err := inv.Counts(ctx, now)
	if err != nil {
		return nil, err
	}
	from := now.Truncate(time.Hour).Add(-47 * time.Hour)
	hist, err := inv.Issuance(ctx, from, time.Hour, 48)
	if err != nil {
		return nil, err
	}
	h := s.cfg.Service.CA().Hierarchy()
	v := &OverviewView{Counts: counts, IssuanceFrom: from, IssuanceStep: "1h", Issuance: hist,
		IntermediateExpires: h.Intermediate.NotAfter.UTC(), Intermediate: h.Intermediate.Subject.String(),
		Denials: s.cfg.Metrics.DenialsByLimit(), Config: s.cfg.Config()}
	if h.Root != nil {
		t := h.Root.NotAfter.UTC()
		v.RootExpires = &t
	}
	return v, nil
}

// sortByPressure orders buckets by how full they are, the emptiest first:
// by the fraction of capacity remaining, then by bucket key.
func sortByPressure(bs []BucketView) {
	frac := func(b BucketView) float64 {
		if !b.Enabled || b.Capacity == 0 {
			return 2
		}
		return float64(b.Remaining) / float64(b.Capacity)
	}
	slices.SortStableFunc(bs, func(a, b BucketView) int {
		fa, fb := frac(a), frac(b)
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return strings.Compare(a.Bucket, b.Bucket)
	})
}
