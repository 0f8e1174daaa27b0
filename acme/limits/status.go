// SPDX-License-Identifier: Apache-2.0

package limits

import (
	"context"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// Status reads buckets without spending (ratelimit.Limiter.Status).
func (r *Adapter) Status(ctx context.Context, reqs ...ratelimit.Request) ([]ratelimit.BucketStatus, error) {
	return r.state.Load().lim.Status(ctx, reqs...)
}

// Reset makes a bucket fresh (an administrator's action): in the backend,
// and in this replica's in-process fallback, whose rate buckets hold the
// replica's own count (reserve.go). Another replica's fallback keeps its
// count, which refuses against the backend only within the refill time
// after that replica's last degraded admission.
func (r *Adapter) Reset(ctx context.Context, bucketKey string) error {
	st := r.state.Load()
	if err := st.lim.Reset(ctx, bucketKey); err != nil {
		return err
	}
	if fb := st.cfg.Fallback; fb != nil {
		return fb.Reset(ctx, bucketKey)
	}
	return nil
}

// Policy returns the policy the current limiter enforces.
func (r *Adapter) Policy() ratelimit.Policy { return r.state.Load().lim.Policy() }

// RenewalsPerHour is how many renewals of names identifiers an hour the
// account can make without a 429 (ratelimit.Limiter.RenewalsPerHour of
// the current limiter): the renewal planner keeps each account's windows
// within it.
func (r *Adapter) RenewalsPerHour(accountID acme.AccountID, names int) float64 {
	return r.state.Load().lim.RenewalsPerHour(string(accountID), names)
}
