// SPDX-License-Identifier: Apache-2.0

package web

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestHealthCannotWrite: a store that answers but cannot write is named
// as such in /readyz, without the cause's details.
func TestHealthCannotWrite(t *testing.T) {
	h := NewHealth(map[string]Check{
		"storage": func(context.Context) error {
			return fmt.Errorf("%w: /var/lib/weir: 0 bytes free", ErrCannotWrite)
		},
	}, 0, nil)
	rep := h.Check(context.Background())
	got := rep.Checks["storage"]
	if rep.Status != "unavailable" || !strings.HasPrefix(got, "error: cannot write") || strings.Contains(got, "/var/lib/weir") {
		t.Errorf("report %+v, want storage failing as \"cannot write\" without the path", rep)
	}
}
