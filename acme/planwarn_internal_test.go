// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme/renewal"
)

// TestPlanWarner: a plan over a capacity is logged when it goes over,
// again every planWarnRepeat while it stays over (not at every check),
// and once when it is back within both.
func TestPlanWarner(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	t0 := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	peak := t0.Add(6 * time.Hour)
	overCeiling := &renewal.Capacity{CeilingPerHour: 600, PeakPerHour: 17140.4, PeakAt: &peak, SlotsOver: 12, OverFrom: &peak, Slot: "1m0s"}
	overAcct := &renewal.Capacity{CeilingPerHour: 600, AccountsOver: 2,
		Accounts: []renewal.AccountCapacity{{Account: "7", PeakPerHour: 430, HeadroomPerHour: 43, PeakAt: peak}, {Account: "9", PeakPerHour: 50, HeadroomPerHour: 43}}}
	within := &renewal.Capacity{CeilingPerHour: 600, PeakPerHour: 12}
	var w planWarner
	steps := []struct {
		c    *renewal.Capacity
		at   time.Duration
		want []string // substrings of what is logged; nil: nothing
	}{
		{within, 0, nil},
		{nil, planWarnEvery, nil},
		{overCeiling, 2 * planWarnEvery, []string{"level=WARN", "max-renewals-per-hour", "peak_per_hour=17140", "slots_over=12"}},
		{overCeiling, 3 * planWarnEvery, nil},
		{overAcct, 4 * planWarnEvery, nil}, // still over, within the hour
		{overAcct, 2*planWarnEvery + planWarnRepeat, []string{"level=WARN", "san-budget", "accounts=2", "worst_account=7", "headroom_per_hour=43"}},
		{within, 3*planWarnEvery + planWarnRepeat, []string{"level=INFO", "back within"}},
		{within, 4*planWarnEvery + planWarnRepeat, nil},
	}
	for i, s := range steps {
		buf.Reset()
		w.check(log, s.c, t0.Add(s.at))
		got := buf.String()
		if s.want == nil && got != "" {
			t.Errorf("step %d: logged %q, want nothing", i, got)
		}
		for _, sub := range s.want {
			if !strings.Contains(got, sub) {
				t.Errorf("step %d: logged %q, want %q in it", i, got, sub)
			}
		}
	}
}
