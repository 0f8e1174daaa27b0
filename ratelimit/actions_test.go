// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// describe renders requests one per line: "name key [cost] [member] [check] [override]".
func describe(reqs []Request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		s := BucketKey(r.Name, r.Key)
		if r.Cost != 0 {
			s += fmt.Sprintf(" cost=%d", r.Cost)
		}
		if r.Member != "" {
			s += " member=" + r.Member
		}
		if r.CheckOnly {
			s += " check"
		}
		if r.OverrideKey != "" {
			s += " override=" + r.OverrideKey
		}
		out[i] = s
	}
	return out
}

// TestActionRequests: what each ACME action asks of the limits.
func TestActionRequests(t *testing.T) {
	exp := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	set := FQDNSetKey("7", []string{"a.example.com", "*.b.example.org", "192.0.2.1"})
	o := Order{ID: "o1", Account: "7", OverrideKey: "eab:team", Names: []string{"a.example.com", "*.b.example.org", "192.0.2.1"}}
	fresh := []Authz{{ID: "z1", Expires: exp}, {ID: "z2", Expires: exp}}
	// Checked by every new order of o's names.
	checks := []string{
		"failed-validation:7:a.example.com check",
		"failed-validation:7:*.b.example.org check",
		"failed-validation:7:192.0.2.1 check",
		"registered-domain:example.com check",
		"registered-domain:example.org check",
	}
	renewal, urgent := o, o
	renewal.Renewal = true
	urgent.Renewal, urgent.Urgent = true, true
	for _, tc := range []struct {
		name string
		got  []Request
		want []string
	}{
		{"new-account", NewAccountRequests(netip.MustParseAddr("2001:db8:1:2:3::4")), []string{"account-creation:2001:db8:1:2::/64"}},
		{"new-order", NewOrderRequests(o, fresh), slices.Concat(
			[]string{"order-creation:7 override=eab:team", "duplicate-certificate:" + set + " check", "san-budget:7 cost=3 override=eab:team"},
			checks,
			[]string{"pending-authorizations:7 member=z1 override=eab:team", "pending-authorizations:7 member=z2 override=eab:team"})},
		{"new-order, ARI renewal", NewOrderRequests(renewal, fresh[:1]), slices.Concat(
			[]string{"san-budget:7 cost=3 override=eab:team"}, checks, []string{"pending-authorizations:7 member=z1 override=eab:team"})},
		{"new-order, urgent renewal", NewOrderRequests(urgent, fresh), checks},
		{"finalize", FinalizeRequests(o), []string{
			"duplicate-certificate:" + set + " member=o1",
			"registered-domain:example.com",
			"registered-domain:example.org",
		}},
		{"finalize, ARI renewal", FinalizeRequests(renewal), []string{"registered-domain:example.com", "registered-domain:example.org"}},
		{"revoked", []Request{RevokedRequest("7", o.Names, "o1")}, []string{"duplicate-certificate:" + set + " member=o1"}},
		{"account buckets", AccountBuckets("7", "eab:team", []string{"x.example.com", "192.0.2.9"}, [][]string{{"a.example.com", "y.example.com"}}), []string{
			"order-creation:7 override=eab:team",
			"san-budget:7 override=eab:team",
			"pending-authorizations:7 override=eab:team",
			"failed-validation:7:x.example.com",
			"failed-validation:7:192.0.2.9",
			"duplicate-certificate:" + FQDNSetKey("7", []string{"a.example.com", "y.example.com"}),
			"registered-domain:example.com",
			"registered-domain:192.0.2.9",
		}},
		{"address buckets", AddressBuckets(netip.MustParseAddr("192.0.2.7")), []string{"account-creation:192.0.2.7"}},
	} {
		if got := describe(tc.got); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	for _, r := range NewOrderRequests(o, fresh) {
		if r.Name == PendingAuthorizations && !r.MemberTime.Equal(exp) {
			t.Errorf("pending-authorizations member %s expires %v, want %v", r.Member, r.MemberTime, exp)
		}
	}

	free, spend := AuthzFinishedRequests("7", "z1", "*.b.example.org", false)
	if got, want := describe(append([]Request{free}, spend...)), []string{"pending-authorizations:7 member=z1"}; !slices.Equal(got, want) {
		t.Errorf("authorization valid: %q, want %q", got, want)
	}
	free, spend = AuthzFinishedRequests("7", "z1", "*.b.example.org", true)
	if got, want := describe(append([]Request{free}, spend...)), []string{"pending-authorizations:7 member=z1", "failed-validation:7:*.b.example.org"}; !slices.Equal(got, want) {
		t.Errorf("authorization invalid: %q, want %q", got, want)
	}
}

// TestAccountLevel: the account's own buckets.
func TestAccountLevel(t *testing.T) {
	var own []Name
	for _, n := range Names() {
		if n.AccountLevel() {
			own = append(own, n)
		}
	}
	if want := []Name{OrderCreation, SANBudget, PendingAuthorizations}; !slices.Equal(own, want) {
		t.Errorf("account-level limits %v, want %v", own, want)
	}
}
