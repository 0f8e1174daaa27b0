// SPDX-License-Identifier: Apache-2.0

package transfer_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/renewal"
	"github.com/weir-pki/weir/storage/postgres"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
	"github.com/weir-pki/weir/storage/sqlite"
	"github.com/weir-pki/weir/storage/transfer"
)

// postgresDSN returns a DSN on a fresh schema of the test server.
func postgresDSN(t *testing.T) string {
	t.Helper()
	_, dsn := pgtest.Schema(t, "weir_transfer_")
	return dsn
}

// store is what the round trip reads of both backends.
type store interface {
	acme.Store
	acme.Inventory
	acme.EABStore
}

// populate fills s through the acme interfaces: accounts (some bound to
// EAB keys, one deactivated), orders in every stored status with their
// authorizations and challenges (failed ones with problem documents),
// certificates (revoked ones, a renewal that replaces another, windows
// moved by incident mode; with how each name was validated, or, as those
// issued before that was recorded, without). It returns the IDs of the
// orders.
func populate(t *testing.T, s store) []acme.OrderID {
	t.Helper()
	ctx := t.Context()
	t0 := time.Date(2031, 3, 4, 5, 6, 7, 891011123, time.UTC) // nanoseconds survive
	var orders []acme.OrderID
	for i := range 12 {
		a := &acme.Account{Key: []byte(fmt.Sprintf(`{"kty":"EC","x":"%d"}`, i)), KeyThumbprint: acme.Thumbprint(fmt.Sprintf("thumb-%d", i)),
			Status: acme.StatusValid, CreatedAt: t0.Add(time.Duration(i) * time.Second), CreatedIP: "192.0.2.7"}
		if i%3 == 0 {
			a.Contact = []string{fmt.Sprintf("mailto:ops%d@example.org", i)}
		}
		if i%4 == 1 {
			k := &acme.EABKey{ID: fmt.Sprintf("kid-%d", i), Label: "team", HMACKey: []byte("0123456789abcdef0123456789abcdef"), CreatedAt: t0}
			if err := s.CreateEABKey(ctx, k); err != nil {
				t.Fatal(err)
			}
			a.EABKeyID = k.ID
		}
		if err := s.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			name := fmt.Sprintf("h%d-%d.example.org", i, j)
			authz := &acme.Authorization{ID: acme.AuthzID("authz-" + name), AccountID: a.ID, Identifier: acme.Identifier{Type: acme.IdentifierDNS, Value: name},
				Wildcard: j == 2, Status: acme.StatusPending, Expires: t0.Add(time.Hour), CreatedAt: t0}
			for k, typ := range []acme.ChallengeType{acme.ChallengeHTTP01, acme.ChallengeDNS01} {
				authz.Challenges = append(authz.Challenges, &acme.Challenge{ID: acme.ChallengeID(fmt.Sprintf("ch-%s-%d", name, k)), AuthzID: authz.ID,
					Type: typ, Token: fmt.Sprintf("tok-%s-%d", name, k), Status: acme.StatusPending, UpdatedAt: t0})
			}
			o := &acme.Order{ID: acme.OrderID("order-" + name), AccountID: a.ID, Status: acme.StatusPending, Identifiers: []acme.Identifier{authz.Identifier},
				AuthzIDs: []acme.AuthzID{authz.ID}, Expires: t0.Add(24 * time.Hour), CreatedAt: t0.Add(time.Duration(j) * time.Millisecond), Profile: "tls-server"}
			if j == 1 {
				o.NotBefore, o.NotAfter = t0, t0.Add(48*time.Hour)
			}
			if err := s.CreateOrder(ctx, o, []*acme.Authorization{authz}); err != nil {
				t.Fatal(err)
			}
			orders = append(orders, o.ID)
			switch j {
			case 0: // issued
				authz.Status = acme.StatusValid
				authz.Challenges[0].Status, authz.Challenges[0].Validated = acme.StatusValid, t0.Add(time.Second)
				if err := s.UpdateAuthz(ctx, authz, acme.StatusPending); err != nil {
					t.Fatal(err)
				}
				if err := s.StartFinalize(ctx, o.ID, "weir-test", []byte("CSR "+name), t0, time.Minute); err != nil {
					t.Fatal(err)
				}
				c := &acme.Certificate{Serial: fmt.Sprintf("%032x", i+1), AccountID: a.ID, OrderID: o.ID, DER: []byte("DER " + name),
					ChainPEM: []byte("PEM " + name), Names: []string{name}, NotBefore: t0, NotAfter: t0.Add(90 * 24 * time.Hour),
					IssuedAt: t0.Add(time.Duration(i) * time.Minute), Profile: "tls-server",
					RenewalStart: t0.Add(60 * 24 * time.Hour), RenewalEnd: t0.Add(61 * 24 * time.Hour)}
				if i%4 != 3 { // the others have none, as those issued before they were recorded
					c.Validations = []acme.NameValidation{{Name: name, Method: string(acme.ChallengeHTTP01), AuthzID: authz.ID,
						ValidatedAt: t0.Add(time.Second), Reused: i%2 == 1}}
				}
				c.LogEntry = []byte("issued " + c.Serial)
				if err := s.FinalizeOrder(ctx, c); err != nil {
					t.Fatal(err)
				}
				if i%5 == 2 {
					if err := s.RevokeCertificate(ctx, c.Serial, i%6, t0.Add(time.Hour), []byte("revoked "+c.Serial)); err != nil {
						t.Fatal(err)
					}
				}
			case 1: // failed
				authz.Status = acme.StatusInvalid
				authz.Challenges[1].Status = acme.StatusInvalid
				authz.Challenges[1].Error = &acme.Problem{Type: acme.ProbUnauthorized, Detail: "no TXT \u0000 record", Status: 403}
				if err := s.UpdateAuthz(ctx, authz, acme.StatusPending); err != nil {
					t.Fatal(err)
				}
				o.Status, o.Error = acme.StatusInvalid, &acme.Problem{Type: acme.ProbUnauthorized, Detail: "failed", Status: 403}
				if err := s.UpdateOrder(ctx, o, acme.StatusPending); err != nil {
					t.Fatal(err)
				}
			}
		}
		if i == 11 {
			a.Status = acme.StatusDeactivated
			if err := s.UpdateAccount(ctx, a, acme.StatusValid); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.SetRenewalWindows(ctx, []string{fmt.Sprintf("%032x", 4)}, t0.Add(-time.Hour), t0, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeEABKey(ctx, "kid-5", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	populateLog(t, s) // roundtrip_log_test.go
	return orders
}

// TestSQLiteToPostgres: everything the stores say about the state is the
// same after a move from SQLite to PostgreSQL in small batches: every
// account, order, authorization, challenge, certificate and EAB key, the
// lists and counts of the inventory, and the CRL's revocations.
func TestSQLiteToPostgres(t *testing.T) {
	dsn := postgresDSN(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "weir.db")
	src, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	orders := populate(t, src)
	src.Close()

	exp, err := sqlite.OpenExporter(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := postgres.Open(ctx, postgres.Config{DSN: dsn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	im, err := dst.BeginImport(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := exp.Export(ctx, im, 7)
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	got, err := im.Finish(ctx, sum)
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	im.Close()
	exp.Close()
	want := transfer.Counts{transfer.Accounts: 12, transfer.EABKeys: 3, transfer.Authzs: 36, transfer.Challenges: 72,
		transfer.Orders: 36, transfer.Certificates: 12, transfer.LogEntries: 15, transfer.LogHashes: 5, transfer.LogCheckpoints: 1}
	if err := transfer.Compare(want, got); err != nil {
		t.Error(err)
	}

	src, err = sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	same := func(what string, a, b any) {
		t.Helper()
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s differs:\nsqlite:   %+v\npostgres: %+v", what, a, b)
		}
	}
	both := func(what string, f func(s store) (any, error)) {
		t.Helper()
		a, errA := f(src)
		b, errB := f(dst)
		if errA != nil || errB != nil {
			t.Fatalf("%s: sqlite %v, postgres %v", what, errA, errB)
		}
		same(what, a, b)
	}
	both("accounts", func(s store) (any, error) {
		l, _, err := s.ListAccounts(ctx, acme.AccountQuery{Limit: 500})
		return l, err
	})
	both("certificates", func(s store) (any, error) {
		l, _, err := s.ListCertificates(ctx, acme.CertQuery{Limit: 500})
		return l, err
	})
	if l, _, err := dst.ListCertificates(ctx, acme.CertQuery{Limit: 500}); err == nil {
		known := 0
		for _, c := range l {
			if c.Validations != nil {
				known++
			}
		}
		if known != 9 {
			t.Errorf("%d certificates on postgres with their validations, want 9 (the other 3 have none)", known)
		}
	}
	both("orders", func(s store) (any, error) {
		l, _, err := s.ListAllOrders(ctx, acme.OrderQuery{Limit: 500})
		return l, err
	})
	both("EAB keys", func(s store) (any, error) { return s.ListEABKeys(ctx, "") })
	now := time.Date(2031, 3, 5, 0, 0, 0, 0, time.UTC)
	both("counts", func(s store) (any, error) { return s.Counts(ctx, now) })
	both("revoked", func(s store) (any, error) { return s.ListRevoked(ctx, now) })
	both("revoked count", func(s store) (any, error) { return s.RevokedCount(ctx) })
	sameLog(t, src, dst)
	both("renewal windows", func(s store) (any, error) {
		return s.RenewalWindows(ctx, time.Time{}, time.Time{}, renewal.Window{}, 0)
	})
	for _, id := range orders {
		both("order "+string(id), func(s store) (any, error) { return s.GetOrder(ctx, id) })
		o, err := src.GetOrder(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, z := range o.AuthzIDs {
			both("authorization "+string(z), func(s store) (any, error) { return s.GetAuthz(ctx, z) })
		}
		both("orders of account "+string(o.AccountID), func(s store) (any, error) {
			ids, _, err := s.ListOrders(ctx, o.AccountID, "", 100)
			return ids, err
		})
	}
}
