// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"encoding/json"
	"testing"
)

func TestNames(t *testing.T) {
	tests := []struct {
		name Name
		str  string
		kind Kind
	}{
		{Global, "global", KindRate},
		{AccountCreation, "account-creation", KindRate},
		{OrderCreation, "order-creation", KindRate},
		{SANBudget, "san-budget", KindRate},
		{DuplicateCertificate, "duplicate-certificate", KindCount},
		{FailedValidation, "failed-validation", KindRate},
		{PendingAuthorizations, "pending-authorizations", KindCount},
		{RegisteredDomain, "registered-domain", KindRate},
	}
	if got, want := len(Names()), len(tests); got != want {
		t.Fatalf("len(Names()) = %d, want %d: a new Name needs a row here", got, want)
	}
	for i, tt := range tests {
		if got := Names()[i]; got != tt.name {
			t.Errorf("Names()[%d] = %v, want %v", i, got, tt.name)
		}
		if got := tt.name.String(); got != tt.str {
			t.Errorf("%d.String() = %q, want %q", int(tt.name), got, tt.str)
		}
		if got, err := ParseName(tt.str); err != nil || got != tt.name {
			t.Errorf("ParseName(%q) = %v, %v; want %v", tt.str, got, err, tt.name)
		}
		if got := tt.name.Kind(); got != tt.kind {
			t.Errorf("%v.Kind() = %v, want %v", tt.name, got, tt.kind)
		}
	}
	// The numbers are append-only; pin the first and last.
	if Global != 1 || RegisteredDomain != 8 {
		t.Errorf("Global = %d, RegisteredDomain = %d; the values of existing names must not change", Global, RegisteredDomain)
	}
}

func TestNameInvalid(t *testing.T) {
	for _, n := range []Name{0, numNames, -1} {
		if n.Valid() || n.Kind() != KindInvalid {
			t.Errorf("Name(%d) is valid", int(n))
		}
		if _, err := n.MarshalText(); err == nil {
			t.Errorf("Name(%d).MarshalText() = nil error", int(n))
		}
	}
	if got, want := Name(42).String(), "Name(42)"; got != want {
		t.Errorf("Name(42).String() = %q, want %q", got, want)
	}
	for _, s := range []string{"", "Global", "orders", "order-creation "} {
		if _, err := ParseName(s); err == nil {
			t.Errorf("ParseName(%q) = nil error", s)
		}
	}
}

func TestNameJSONMapKey(t *testing.T) {
	in := map[Name]int{OrderCreation: 20, SANBudget: 100}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"order-creation":20,"san-budget":100}`; got != want {
		t.Errorf("json = %s, want %s", got, want)
	}
	var out map[Name]int
	if err := json.Unmarshal(b, &out); err != nil || out[SANBudget] != 100 || len(out) != 2 {
		t.Errorf("round trip = %v, %v", out, err)
	}
}
