// SPDX-License-Identifier: Apache-2.0

package limits_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit"
)

// unwritableSource is a Source whose every Apply fails as a SQLite
// limiter on a full disk does.
type unwritableSource struct{ ratelimit.Source }

func (unwritableSource) Apply(context.Context, *ratelimit.Batch) (*ratelimit.BatchResult, error) {
	return nil, fmt.Errorf("%w: database or disk is full", ratelimit.ErrUnwritable)
}

// TestUnwritableBackendRefuses: a limiter backend that cannot write is
// refused with 503 serverInternal and Retry-After even under
// on-backend-error: allow, which would admit the request unlimited.
func TestUnwritableBackendRefuses(t *testing.T) {
	lims := map[ratelimit.Name]ratelimit.Limit{ratelimit.OrderCreation: {Count: 20, Period: time.Hour, Burst: 5}}
	cfg := ratelimit.Policy{Limits: lims, Enabled: map[ratelimit.Name]bool{ratelimit.OrderCreation: true}}
	lim, err := ratelimit.New(cfg, unwritableSource{ratelimit.NewMemorySource(nil)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rl := limits.New(limits.Config{OnBackendError: limits.BackendAllow, BackendTimeout: time.Second}, lim, nil)
	acct := &acme.Account{ID: "7", Status: acme.StatusValid}
	_, err = rl.NewOrder(context.Background(), acct, &acme.Order{AccountID: acct.ID, Identifiers: dnsIDs("a.example.com")}, nil)
	var p *acme.Problem
	if !errors.As(err, &p) || p.Type != acme.ProbServerInternal || p.Status != http.StatusServiceUnavailable || p.RetryAfter <= 0 {
		t.Fatalf("new-order with a limiter that cannot write: %v (%+v), want 503 serverInternal with Retry-After", err, p)
	}
	if rl.BackendErrors() != 1 {
		t.Errorf("backend errors = %d, want 1", rl.BackendErrors())
	}
}
