// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"math/big"
	"testing"
)

func TestNewSerial(t *testing.T) {
	seen := make(map[string]bool)
	for i := 0; i < 200; i++ {
		s, err := NewSerial()
		if err != nil {
			t.Fatalf("NewSerial: %v", err)
		}
		if s.Sign() <= 0 {
			t.Fatalf("serial %v: got sign %d, want positive", s, s.Sign())
		}
		if got := s.BitLen(); got > 128 || got <= 64 {
			t.Fatalf("serial %v: got %d bits, want 65..128", s, got)
		}
		h := SerialHex(s)
		if seen[h] {
			t.Fatalf("serial %s repeated", h)
		}
		seen[h] = true
	}
}

func TestSerialHex(t *testing.T) {
	tests := []struct {
		in   *big.Int
		want string
	}{
		{nil, ""},
		{big.NewInt(0), "00"},
		{big.NewInt(1), "01"},
		{big.NewInt(255), "ff"},
		{big.NewInt(0xabc), "0abc"},
		{new(big.Int).Lsh(big.NewInt(1), 127), "80000000000000000000000000000000"},
	}
	for _, tt := range tests {
		if got := SerialHex(tt.in); got != tt.want {
			t.Errorf("SerialHex(%v): got %q, want %q", tt.in, got, tt.want)
		}
	}
}
