// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"crypto/x509"
	"encoding/base64"
	"math/big"
	"strings"
	"testing"

	"github.com/weir-pki/weir/ca"
)

// certIDOf is the RFC 9773 identifier of a serial given as hex, under the
// key identifier AQID.
func certIDOf(t *testing.T, serialHex string) string {
	t.Helper()
	n, ok := new(big.Int).SetString(serialHex, 16)
	if !ok {
		t.Fatalf("bad serial %q", serialHex)
	}
	return CertID(&x509.Certificate{AuthorityKeyId: []byte{1, 2, 3}, SerialNumber: n})
}

func TestParseCertID(t *testing.T) {
	b64 := base64.RawURLEncoding.EncodeToString
	tests := []struct {
		name       string
		id         string
		wantSerial string // "" means malformed
	}{
		{"DER form, high bit clear", certIDOf(t, "7f0102"), "7f0102"},
		{"DER form, high bit set", certIDOf(t, "8f0102"), "8f0102"},
		{"high bit set without the DER zero octet (mod_md)", "AQID." + b64([]byte{0x8f, 1, 2}), "8f0102"},
		{"one octet", "AQID." + b64([]byte{5}), "05"},
		{"20 octets, high bit set, unpadded", "AQID." + b64(append([]byte{0xff}, make([]byte, 19)...)), "ff" + strings.Repeat("00", 19)},
		{"20 octets with the DER zero octet", "AQID." + b64(append([]byte{0, 0xff}, make([]byte, 19)...)), "ff" + strings.Repeat("00", 19)},
		{"redundant leading zero", "AQID." + b64([]byte{0, 0x7f}), ""},
		{"two leading zeros", "AQID." + b64([]byte{0, 0, 0x8f}), ""},
		{"21 octets of value", "AQID." + b64(append([]byte{1}, make([]byte, 20)...)), ""},
		{"22 octets", "AQID." + b64(make([]byte, 22)), ""},
		{"no serial", "AQID.", ""},
		{"no key identifier", "." + b64([]byte{5}), ""},
		{"no dot", "AQIDBQ", ""},
		{"padding", "AQID.BQ==", ""},
		{"standard base64", "AQID.+/8", ""},
		{"set bits past the data", "AQID.BR", ""},
		{"line break", "AQ\nID.BQ", ""},
		{"not base64", "!!!.BQ", ""},
		{"three parts", "AQID.BQ.BQ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			aki, serial, p := parseCertID(tt.id)
			if tt.wantSerial == "" {
				if p == nil || p.Type != ProbMalformed || p.Status != 400 {
					t.Fatalf("parseCertID(%q) = %x, %q, %v; want malformed", tt.id, aki, serial, p)
				}
				return
			}
			if p != nil || serial != tt.wantSerial || string(aki) != "\x01\x02\x03" {
				t.Fatalf("parseCertID(%q) = %x, %q, %v; want 010203, %q", tt.id, aki, serial, p, tt.wantSerial)
			}
		})
	}
}

// FuzzParseCertID: parseCertID never panics, a failure is malformed, and
// a success is the identifier's own text: the key identifier and the
// serial re-encode to exactly the input, with the serial in one of the two
// accepted forms (DER INTEGER content, or unsigned big-endian octets).
func FuzzParseCertID(f *testing.F) {
	b64 := base64.RawURLEncoding.EncodeToString
	for _, s := range []string{
		"AQID.AI8BAg", "AQID.jwEC", "AQID.fwEC", "AQID.AH8", "AQID.BQ==", "AQID.BR", "AQID.", ".BQ",
		"AQ\nID.BQ", "a.b.c", "AQID." + b64(make([]byte, 21)), "AQID." + b64(append([]byte{0}, make([]byte, 20)...)),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		aki, serial, p := parseCertID(id)
		if p != nil {
			if p.Type != ProbMalformed || p.Status != 400 || p.Detail == "" {
				t.Fatalf("parseCertID(%q) problem %+v; want malformed, 400, a detail", id, p)
			}
			return
		}
		n, ok := new(big.Int).SetString(serial, 16)
		if !ok || ca.SerialHex(n) != serial || n.Sign() < 0 || len(n.Bytes()) > 20 {
			t.Fatalf("parseCertID(%q) serial %q is not a positive serial of at most 20 octets in weir's form", id, serial)
		}
		der := n.Bytes()
		if len(der) == 0 || der[0]&0x80 != 0 {
			der = append([]byte{0}, der...)
		}
		a, s, _ := strings.Cut(id, ".")
		if a != b64(aki) || (s != b64(der) && s != b64(n.Bytes())) {
			t.Fatalf("parseCertID(%q) = %x, %s: not what the identifier encodes", id, aki, serial)
		}
	})
}
