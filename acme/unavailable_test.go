// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/weir-pki/weir/acme"
)

// TestStoreUnavailableIs503: a store that cannot write is a 503
// serverInternal with Retry-After, anything else unexpected a 500.
func TestStoreUnavailableIs503(t *testing.T) {
	p := acme.AsProblem(fmt.Errorf("create order: %w: disk full", acme.ErrUnavailable))
	if p.Type != acme.ProbServerInternal || p.Status != http.StatusServiceUnavailable || p.RetryAfter != acme.UnavailableRetryAfter {
		t.Errorf("problem %+v, want 503 serverInternal with Retry-After %s", p, acme.UnavailableRetryAfter)
	}
	if p := acme.AsProblem(fmt.Errorf("boom")); p.Status != http.StatusInternalServerError || p.RetryAfter != 0 {
		t.Errorf("problem %+v, want a plain 500", p)
	}
}
