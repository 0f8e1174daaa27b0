// SPDX-License-Identifier: Apache-2.0

package limits

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/weir-pki/weir/acme"
)

// resolvedUnwritable is how a spend whose backend cannot write is
// resolved, for the request's log line.
const resolvedUnwritable = "refused with 503: the limiter's storage cannot be written"

// cannotWrite refuses the failed call ev, whose backend could not persist
// it because its storage cannot be written (ratelimit.ErrUnwritable: a
// SQLite limiter on a full, read-only or failing disk). That is the fault
// of a store that cannot write, on the same disk, and not a slow backend,
// so on-backend-error does not apply: admitting the request would let it
// pass unlimited. The client gets 503 serverInternal with Retry-After,
// the store's answer when it cannot write (acme.ErrUnavailable).
func (r *Adapter) cannotWrite(ctx context.Context, st *state, ev acme.LimiterEvent) (func(), error) {
	r.backendErrors.Add(1)
	r.report(ctx, st, ev, resolvedUnwritable)
	r.log.LogAttrs(ctx, slog.LevelWarn, "rate limiter cannot write; request refused", slog.String("action", ev.Action), slog.String("err", ev.Err.Error()))
	return nil, acme.Internal(fmt.Errorf("rate limiter: %w: %w", acme.ErrUnavailable, ev.Err))
}
