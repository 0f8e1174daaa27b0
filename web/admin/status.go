// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// The views of the resources (BucketView here; ExplainView, LimitsView,
// AccountView, OrderView, CRLView and OverviewView in the files named after
// them) are what both the JSON API and the dashboard show; the CLI decodes
// the same JSON.

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
