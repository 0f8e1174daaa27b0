// SPDX-License-Identifier: Apache-2.0

package web

import (
	"net/netip"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// connEvents counts what a ConnLimiter reports.
type connEvents struct{ opened, closed, timedOut, refused int }

func (e *connEvents) ConnOpened()        { e.opened++ }
func (e *connEvents) ConnClosed()        { e.closed++ }
func (e *connEvents) ConnRefused(string) { e.refused++ }
func (e *connEvents) ConnTimedOut()      { e.timedOut++ }

// TestConnLimiterCaps: the per-IP cap groups an IPv6 /64, exempts the
// whitelist and trusted proxies, the total cap counts everyone, a
// release frees a place, and a reload changes the caps at once.
func TestConnLimiterCaps(t *testing.T) {
	proxy := netip.MustParsePrefix("10.0.0.0/8")
	c := NewConnLimiter(ConnLimits{PerIP: 2, Total: 5, FirstRequest: time.Second, Exempt: []netip.Prefix{proxy}}, &connEvents{})
	admit := func(ip string) string {
		_, refused := c.admit(netip.MustParseAddr(ip))
		return refused
	}
	for i, want := range []string{"", "", refusedPerIP} {
		if got := admit("2001:db8::1"); got != want {
			t.Fatalf("connection %d of 2001:db8::1 = %q, want %q", i+1, got, want)
		}
	}
	if got := admit("2001:db8::ffff"); got != refusedPerIP {
		t.Errorf("another address of the same /64 = %q, want refused per-ip", got)
	}
	for i := range 3 {
		if got := admit("10.1.2.3"); got != "" {
			t.Fatalf("trusted proxy connection %d = %q, want admitted (exempt from max-per-ip)", i+1, got)
		}
	}
	if got := admit("10.1.2.3"); got != refusedTotal {
		t.Errorf("sixth connection = %q, want refused by max-total", got)
	}
	c.release(ratelimit.IPPrefix(netip.MustParseAddr("2001:db8::1")))
	if got := admit("2001:db8::2"); got != "" {
		t.Errorf("after a release = %q, want admitted", got)
	}
	c.Set(ConnLimits{PerIP: 0, Total: 0})
	for i := range 10 {
		if got := admit("192.0.2.1"); got != "" {
			t.Fatalf("connection %d with the caps off = %q, want admitted", i+1, got)
		}
	}
}
