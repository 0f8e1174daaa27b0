// SPDX-License-Identifier: Apache-2.0

package ca

import "testing"

func TestValidReason(t *testing.T) {
	for code := -2; code <= 12; code++ {
		want := code >= 0 && code <= 10 && code != 7
		if got := ValidReason(code); got != want {
			t.Errorf("ValidReason(%d): got %v, want %v", code, got, want)
		}
	}
}

func TestReasonRoundTrip(t *testing.T) {
	for code := 0; code <= 10; code++ {
		if !ValidReason(code) {
			continue
		}
		name := ReasonString(code)
		got, err := ReasonFromString(name)
		if err != nil {
			t.Errorf("ReasonFromString(%q): %v", name, err)
			continue
		}
		if got != code {
			t.Errorf("ReasonFromString(ReasonString(%d)=%q): got %d, want %d", code, name, got, code)
		}
	}
}

func TestReasonFromString(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{"keyCompromise", ReasonKeyCompromise, false},
		{"KEYCOMPROMISE", ReasonKeyCompromise, false},
		{" superseded ", ReasonSuperseded, false},
		{"cACompromise", ReasonCACompromise, false},
		{"aACompromise", ReasonAACompromise, false},
		{"removeFromCRL", ReasonRemoveFromCRL, false},
		{"4", ReasonSuperseded, false},
		{"7", 0, true},
		{"11", 0, true},
		{"-1", 0, true},
		{"", 0, true},
		{"stolen", 0, true},
	}
	for _, tt := range tests {
		got, err := ReasonFromString(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ReasonFromString(%q): got err %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ReasonFromString(%q): got %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestReasonString(t *testing.T) {
	tests := []struct {
		code int
		want string
	}{
		{ReasonUnspecified, "unspecified"},
		{ReasonKeyCompromise, "keyCompromise"},
		{ReasonCessationOfOperation, "cessationOfOperation"},
		{ReasonPrivilegeWithdrawn, "privilegeWithdrawn"},
		{7, "reason(7)"},
		{42, "reason(42)"},
	}
	for _, tt := range tests {
		if got := ReasonString(tt.code); got != tt.want {
			t.Errorf("ReasonString(%d): got %q, want %q", tt.code, got, tt.want)
		}
	}
}

// TestSubscriberAndOperatorReasons: a subscriber may give the Baseline
// Requirements' reasons only; an operator any RFC 5280 reason but
// certificateHold and removeFromCRL; neither an invalid code.
func TestSubscriberAndOperatorReasons(t *testing.T) {
	subscriber := map[int]bool{0: true, 1: true, 3: true, 4: true, 5: true}
	operator := map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 5: true, 9: true, 10: true}
	for code := -2; code <= 12; code++ {
		if got := SubscriberReason(code); got != subscriber[code] {
			t.Errorf("SubscriberReason(%d) = %v, want %v", code, got, subscriber[code])
		}
		if got := OperatorReason(code); got != operator[code] {
			t.Errorf("OperatorReason(%d) = %v, want %v", code, got, operator[code])
		}
	}
}
