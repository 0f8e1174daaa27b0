// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto/elliptic"
	"testing"
	"time"
)

// TestIssueBackdate: a leaf whose validity period is not asked for starts
// the backdate before its signing time (the CA's clock, here a second
// and a half into a second), and ends its lifetime after that, so
// notAfter - notBefore is the lifetime exactly; a requested period is
// kept as asked; the backdate never exceeds half the lifetime or
// MaxBackdate.
func TestIssueBackdate(t *testing.T) {
	signing := testNow().Add(90 * time.Minute).Add(500 * time.Millisecond)
	c := newTestCA(t, Config{Lifetime: testLifetime}, signing)
	key := &newECKey(t, elliptic.P256()).PublicKey
	at := signing.Truncate(time.Second)
	tests := []struct {
		name                 string
		req                  IssueRequest
		wantBefore, wantLife time.Duration // notBefore - at, notAfter - notBefore
	}{
		{"no backdate", IssueRequest{}, 0, testLifetime},
		{"one minute", IssueRequest{Backdate: time.Minute}, -time.Minute, testLifetime},
		{"a profile's lifetime", IssueRequest{Backdate: time.Minute, Lifetime: 24 * time.Hour}, -time.Minute, 24 * time.Hour},
		{"cut to half a short lifetime", IssueRequest{Backdate: time.Minute, Lifetime: 30 * time.Second}, -15 * time.Second, 30 * time.Second},
		{"cut to MaxBackdate", IssueRequest{Backdate: 2 * MaxBackdate}, -MaxBackdate, testLifetime},
		{"requested notBefore kept", IssueRequest{Backdate: time.Minute, NotBefore: at.Add(time.Hour)}, time.Hour, testLifetime},
		{"requested notAfter kept", IssueRequest{Backdate: time.Minute, NotAfter: at.Add(48 * time.Hour)}, 0, 48 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.PublicKey, tt.req.DNSNames = key, []string{"a.example"}
			iss, err := c.Issue(tt.req)
			if err != nil {
				t.Fatalf("Issue: %v", err)
			}
			nb, na := iss.Cert.NotBefore, iss.Cert.NotAfter
			if want := at.Add(tt.wantBefore); !nb.Equal(want) {
				t.Errorf("notBefore %v, want %v (signing time %v %+v)", nb, want, at, tt.wantBefore)
			}
			if got := na.Sub(nb); got != tt.wantLife {
				t.Errorf("notAfter - notBefore = %v, want %v", got, tt.wantLife)
			}
		})
	}
	if _, err := c.Issue(IssueRequest{PublicKey: key, DNSNames: []string{"a.example"}, Backdate: -time.Second}); err == nil {
		t.Error("Issue with a negative backdate: no error")
	}
}
