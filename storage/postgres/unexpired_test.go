// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestUnexpired: Unexpired counts an issuer's certificates unexpired at
// a time, revoked ones too, beside an open Store; other issuers'
// certificates do not count. A schema without weir's tables holds none;
// a search_path naming no schema and an unreachable server are errors.
func TestUnexpired(t *testing.T) {
	ctx := t.Context()
	_, dsn := freshSchema(t)
	if u, err := Unexpired(ctx, Config{DSN: dsn}, acme.DefaultIssuer, fixedNow()); err != nil || u.N != 0 {
		t.Fatalf("Unexpired of a schema without tables = %+v, %v; want none", u, err)
	}
	s := openDSN(t, dsn)
	_, c := seed(t, s) // the default issuer's, until fixedNow+1h
	if err := s.RevokeCertificate(ctx, c.Serial, 1, fixedNow(), nil); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		issuer string
		at     time.Time
		n      int64
	}{
		{acme.DefaultIssuer, fixedNow(), 1},
		{"", fixedNow(), 1},
		{acme.DefaultIssuer, c.NotAfter, 0},
		{"r2", fixedNow(), 0},
	} {
		u, err := Unexpired(ctx, Config{DSN: dsn}, w.issuer, w.at)
		if err != nil {
			t.Fatalf("Unexpired(%q, %s): %v", w.issuer, w.at, err)
		}
		if u.N != w.n || (w.n > 0 && !u.Last.Equal(c.NotAfter)) {
			t.Errorf("Unexpired(%q, %s) = %d until %s; want %d", w.issuer, w.at, u.N, u.Last, w.n)
		}
	}

	missing := withParams(t, baseDSN(t), map[string]string{"search_path": randomName("weir_missing_")})
	if _, err := Unexpired(ctx, Config{DSN: missing}, acme.DefaultIssuer, fixedNow()); err == nil {
		t.Error("Unexpired with a search_path naming no schema = nil error; want one")
	}
	down := Config{DSN: "postgres://weir@127.0.0.1:1/weir?sslmode=disable", ConnectTimeout: 2 * time.Second}
	if _, err := Unexpired(ctx, down, acme.DefaultIssuer, fixedNow()); err == nil {
		t.Error("Unexpired with no server = nil error; want one")
	}
}
