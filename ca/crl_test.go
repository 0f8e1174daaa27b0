// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"bytes"
	"crypto/x509"
	"math/big"
	"strings"
	"testing"
	"time"
)

func TestCRL(t *testing.T) {
	c := newTestCA(t, testConfig(), testNow())
	h := c.Hierarchy()
	s1, err := NewSerial()
	if err != nil {
		t.Fatal(err)
	}
	s2, err := NewSerial()
	if err != nil {
		t.Fatal(err)
	}
	entries := []RevokedEntry{
		{Serial: s1, RevokedAt: testNow().Add(-time.Hour), Reason: ReasonKeyCompromise},
		{Serial: s2, RevokedAt: testNow().Add(-2 * time.Hour), Reason: ReasonUnspecified},
	}
	thisUpdate, nextUpdate := testNow(), testNow().Add(24*time.Hour)
	der, err := c.CRL(entries, big.NewInt(42), thisUpdate, nextUpdate)
	if err != nil {
		t.Fatalf("CRL: %v", err)
	}
	crl, err := x509.ParseRevocationList(der)
	if err != nil {
		t.Fatalf("ParseRevocationList: %v", err)
	}
	if err := crl.CheckSignatureFrom(h.Intermediate); err != nil {
		t.Errorf("CheckSignatureFrom(intermediate): %v", err)
	}
	if err := crl.CheckSignatureFrom(h.Root); err == nil {
		t.Error("CheckSignatureFrom(root): got nil error, want failure")
	}
	if got, want := crl.Number, big.NewInt(42); got.Cmp(want) != 0 {
		t.Errorf("Number: got %v, want %v", got, want)
	}
	if !crl.ThisUpdate.Equal(thisUpdate) || !crl.NextUpdate.Equal(nextUpdate) {
		t.Errorf("updates: got %v / %v, want %v / %v", crl.ThisUpdate, crl.NextUpdate, thisUpdate, nextUpdate)
	}
	if !bytes.Equal(crl.AuthorityKeyId, h.Intermediate.SubjectKeyId) {
		t.Errorf("AuthorityKeyId: got %x, want %x", crl.AuthorityKeyId, h.Intermediate.SubjectKeyId)
	}
	if !bytes.Equal(crl.RawIssuer, h.Intermediate.RawSubject) {
		t.Errorf("Issuer: got %v, want %v", crl.Issuer, h.Intermediate.Subject)
	}
	if got, want := len(crl.RevokedCertificateEntries), len(entries); got != want {
		t.Fatalf("entries: got %d, want %d", got, want)
	}
	for i, want := range entries {
		got := crl.RevokedCertificateEntries[i]
		if got.SerialNumber.Cmp(want.Serial) != 0 {
			t.Errorf("entry %d serial: got %s, want %s", i, SerialHex(got.SerialNumber), SerialHex(want.Serial))
		}
		if !got.RevocationTime.Equal(want.RevokedAt) {
			t.Errorf("entry %d time: got %v, want %v", i, got.RevocationTime, want.RevokedAt)
		}
		if got.ReasonCode != want.Reason {
			t.Errorf("entry %d reason: got %d, want %d", i, got.ReasonCode, want.Reason)
		}
	}
}

func TestCRLEmpty(t *testing.T) {
	c := newTestCA(t, testConfig(), testNow())
	der, err := c.CRL(nil, big.NewInt(1), testNow(), testNow().Add(time.Hour))
	if err != nil {
		t.Fatalf("CRL: %v", err)
	}
	crl, err := x509.ParseRevocationList(der)
	if err != nil {
		t.Fatalf("ParseRevocationList: %v", err)
	}
	if got := len(crl.RevokedCertificateEntries); got != 0 {
		t.Errorf("entries: got %d, want 0", got)
	}
}

func TestCRLRejects(t *testing.T) {
	c := newTestCA(t, testConfig(), testNow())
	ok := RevokedEntry{Serial: big.NewInt(5), RevokedAt: testNow(), Reason: ReasonSuperseded}
	tests := []struct {
		name    string
		entries []RevokedEntry
		number  *big.Int
		this    time.Time
		next    time.Time
		wantErr string
	}{
		{"nil number", []RevokedEntry{ok}, nil, testNow(), testNow().Add(time.Hour), "CRL number"},
		{"negative number", []RevokedEntry{ok}, big.NewInt(-1), testNow(), testNow().Add(time.Hour), "CRL number"},
		{"next before this", []RevokedEntry{ok}, big.NewInt(1), testNow(), testNow().Add(-time.Hour), "not after thisUpdate"},
		{"zero this", []RevokedEntry{ok}, big.NewInt(1), time.Time{}, testNow(), "thisUpdate is zero"},
		{"reason 7", []RevokedEntry{{Serial: big.NewInt(5), RevokedAt: testNow(), Reason: 7}}, big.NewInt(1), testNow(), testNow().Add(time.Hour), "invalid reason code 7"},
		{"nil serial", []RevokedEntry{{RevokedAt: testNow()}}, big.NewInt(1), testNow(), testNow().Add(time.Hour), "serial must be positive"},
		{"zero time", []RevokedEntry{{Serial: big.NewInt(5)}}, big.NewInt(1), testNow(), testNow().Add(time.Hour), "revocation time is zero"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.CRL(tt.entries, tt.number, tt.this, tt.next)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("CRL: got %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}
