// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestUnexpired: Unexpired counts an issuer's certificates unexpired at
// a time, revoked ones too, and gives the last to expire, while a Store
// holds the file (and its lock); other issuers' and expired certificates
// do not count. A missing file holds none and is not created, and the
// count leaves the directory as it found it.
func TestUnexpired(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "weir.db")
	ctx := t.Context()
	if u, err := Unexpired(ctx, path, acme.DefaultIssuer, fixedNow()); err != nil || u.N != 0 {
		t.Fatalf("Unexpired of a missing file = %+v, %v; want none", u, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Unexpired created %s (%v)", path, err)
	}

	s := openAt(t, path)
	a, first := seed(t, s) // the default issuer's, until fixedNow+1h
	for i, c := range []struct {
		issuer   string
		notAfter time.Time
		revoked  bool
	}{
		{acme.DefaultIssuer, fixedNow().Add(3 * time.Hour), true},
		{acme.DefaultIssuer, fixedNow().Add(-time.Hour), false},
		{"r2", fixedNow().Add(5 * time.Hour), false},
	} {
		o := &acme.Order{ID: acme.OrderID(fmt.Sprintf("order-u%d", i)), AccountID: a.ID, Status: acme.StatusProcessing,
			Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "example.com"}},
			Expires:     fixedNow().Add(time.Hour), CreatedAt: fixedNow()}
		if err := s.CreateOrder(ctx, o, nil); err != nil {
			t.Fatal(err)
		}
		cert := &acme.Certificate{Serial: fmt.Sprintf("a%d", i), AccountID: a.ID, OrderID: o.ID, DER: []byte("der"),
			Names: []string{"example.com"}, NotBefore: fixedNow().Add(-2 * time.Hour), NotAfter: c.notAfter, IssuedAt: fixedNow(), Issuer: c.issuer}
		if err := s.FinalizeOrder(ctx, cert); err != nil {
			t.Fatal(err)
		}
		if c.revoked {
			if err := s.RevokeCertificate(ctx, cert.Serial, 1, fixedNow(), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := dirNames(t, dir)
	for _, w := range []struct {
		issuer string
		at     time.Time
		n      int64
		last   time.Time
	}{
		{acme.DefaultIssuer, fixedNow(), 2, fixedNow().Add(3 * time.Hour)},
		{"", fixedNow(), 2, fixedNow().Add(3 * time.Hour)},
		{acme.DefaultIssuer, first.NotAfter, 1, fixedNow().Add(3 * time.Hour)},
		{acme.DefaultIssuer, fixedNow().Add(3 * time.Hour), 0, time.Time{}},
		{"r2", fixedNow(), 1, fixedNow().Add(5 * time.Hour)},
		{"r3", fixedNow(), 0, time.Time{}},
	} {
		u, err := Unexpired(ctx, path, w.issuer, w.at)
		if err != nil {
			t.Fatalf("Unexpired(%q, %s) with the store open: %v", w.issuer, w.at, err)
		}
		if u.N != w.n || !u.Last.Equal(w.last) {
			t.Errorf("Unexpired(%q, %s) = %d until %s; want %d until %s", w.issuer, w.at, u.N, u.Last, w.n, w.last)
		}
	}
	if after := dirNames(t, dir); !slices.Equal(before, after) {
		t.Errorf("the directory held %v before the counts and %v after", before, after)
	}

	if err := os.WriteFile(filepath.Join(dir, "junk.db"), []byte("not a database, not at all, but long enough to be read as a header"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Unexpired(ctx, filepath.Join(dir, "junk.db"), acme.DefaultIssuer, fixedNow()); err == nil {
		t.Error("Unexpired of a file that is no database = nil error; want one")
	}
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
