// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"slices"
	"strings"
	"testing"
)

// TestNormalizeContacts: spaces and tabs around a mailto: address are
// dropped and the normalised form is what is kept; every other rule of
// RFC 8555 §7.3 still holds.
func TestNormalizeContacts(t *testing.T) {
	tests := []struct {
		name     string
		in       []string
		want     []string
		wantType ProblemType
		detail   string
	}{
		{name: "none", in: nil, want: nil},
		{name: "empty", in: []string{}, want: []string{}},
		{name: "plain", in: []string{"mailto:a@weir.test"}, want: []string{"mailto:a@weir.test"}},
		{name: "getssl: space after the colon", in: []string{"mailto: a@weir.test"}, want: []string{"mailto:a@weir.test"}},
		{name: "tabs and spaces around", in: []string{" \tmailto:\t a@weir.test \t"}, want: []string{"mailto:a@weir.test"}},
		{name: "several", in: []string{"mailto: a@weir.test", "mailto:b@weir.test"}, want: []string{"mailto:a@weir.test", "mailto:b@weir.test"}},
		{name: "space inside the address", in: []string{"mailto:a b@weir.test"}, wantType: ProbInvalidContact, detail: "single plain"},
		{name: "newline is not trimmed", in: []string{"mailto:\na@weir.test"}, wantType: ProbInvalidContact, detail: "single plain"},
		{name: "only spaces", in: []string{"mailto:  "}, wantType: ProbInvalidContact, detail: "single plain"},
		{name: "space in the scheme", in: []string{"mailto : a@weir.test"}, wantType: ProbUnsupportedContact, detail: "only mailto:"},
		{name: "two addresses", in: []string{"mailto: a@weir.test,b@weir.test"}, wantType: ProbInvalidContact, detail: "single plain"},
		{name: "hfields", in: []string{"mailto: a@weir.test?subject=x"}, wantType: ProbInvalidContact, detail: "single plain"},
		{name: "display name", in: []string{"mailto: A <a@weir.test>"}, wantType: ProbInvalidContact, detail: "single plain"},
		{name: "tel", in: []string{"tel: 123"}, wantType: ProbUnsupportedContact, detail: "only mailto:"},
		{name: "bad domain", in: []string{"mailto: a@bad_name.test"}, wantType: ProbInvalidContact, detail: "invalid domain"},
		{name: "too many", in: slices.Repeat([]string{"mailto:a@weir.test"}, maxContacts+1), wantType: ProbInvalidContact, detail: "too many"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, p := normalizeContacts(tt.in)
			if tt.wantType != "" {
				if p == nil || p.Type != tt.wantType || p.Status != 400 || !strings.Contains(p.Detail, tt.detail) {
					t.Fatalf("normalizeContacts(%q) = %q, %v; want %s 400 with %q", tt.in, got, p, tt.wantType, tt.detail)
				}
				return
			}
			if p != nil || !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Fatalf("normalizeContacts(%q) = %#v, %v; want %#v", tt.in, got, p, tt.want)
			}
		})
	}
}
