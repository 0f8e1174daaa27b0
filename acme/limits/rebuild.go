// SPDX-License-Identifier: Apache-2.0

package limits

import (
	"context"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// CountLoader returns the loader of ratelimit.Recovering: the exact counts
// of the limits the adapter's current limiter enforces, rebuilt from the
// store's records. duplicate-certificate counts every unrevoked
// certificate issued within the limit's window, keyed by account and name
// set, its order as the member; pending-authorizations counts every
// pending authorization until it expires, keyed by account. A bucket's
// window is that of its own override when it has one; certificates are
// read back over the default limit's window.
func (r *Adapter) CountLoader(recs acme.LimitRecords) ratelimit.CountLoader {
	return func(ctx context.Context, now time.Time) ([]ratelimit.CountBucket, error) {
		lim := r.state.Load().lim
		byKey := map[string]*ratelimit.CountBucket{}
		add := func(rq ratelimit.Request, ts time.Time) {
			l, ok := lim.LimitFor(rq)
			if !ok {
				return
			}
			key := ratelimit.BucketKey(rq.Name, rq.Key)
			cb := byKey[key]
			if cb == nil {
				cb = &ratelimit.CountBucket{Key: key, Window: l.WindowMicros(), Members: map[string]int64{}}
				byKey[key] = cb
			}
			cb.Members[rq.Member] = ts.UnixMicro()
		}
		if def, ok := lim.LimitFor(ratelimit.Request{Name: ratelimit.DuplicateCertificate, Key: "-"}); ok {
			certs, err := recs.IssuedSince(ctx, now.Add(-def.Window))
			if err != nil {
				return nil, err
			}
			for _, c := range certs {
				add(ratelimit.RevokedRequest(string(c.AccountID), c.Names, string(c.OrderID)), c.IssuedAt)
			}
		}
		if _, ok := lim.LimitFor(ratelimit.Request{Name: ratelimit.PendingAuthorizations, Key: "-"}); ok {
			pending, err := recs.PendingAuthzs(ctx, now)
			if err != nil {
				return nil, err
			}
			for _, a := range pending {
				free, _ := ratelimit.AuthzFinishedRequests(string(a.AccountID), string(a.AuthzID), "", false)
				add(free, a.Expires)
			}
		}
		out := make([]ratelimit.CountBucket, 0, len(byKey))
		for _, cb := range byKey {
			out = append(out, *cb)
		}
		return out, nil
	}
}
