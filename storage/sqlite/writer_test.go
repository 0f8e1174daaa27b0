// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// holdWriter makes the writer goroutine of s start a transaction and wait
// in it until the returned release is called, so that the writes queued
// meanwhile join that transaction. It returns once the transaction has
// begun. release returns the result of the holding write, which is that of
// the group's COMMIT.
func holdWriter(t *testing.T, s *Store) (release func() error) {
	t.Helper()
	entered, gate := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	var once sync.Once
	go func() {
		done <- s.write(t.Context(), func(*writeTx) error {
			once.Do(func() { close(entered) })
			<-gate
			return nil
		})
	}()
	<-entered
	return func() error {
		close(gate)
		return <-done
	}
}

// mustRelease calls release and fails the test if it returns an error.
func mustRelease(t *testing.T, release func() error) {
	t.Helper()
	if err := release(); err != nil {
		t.Errorf("holding write: %v", err)
	}
}

// waitQueued waits until n writes are queued for the writer of s.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(s.ops) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued after 10s, want %d", len(s.ops), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// async runs f in a goroutine and returns a channel for its error.
func async(f func() error) <-chan error {
	c := make(chan error, 1)
	go func() { c <- f() }()
	return c
}

// account returns a new, unstored valid account with the given thumbprint.
func newAccount(thumb acme.Thumbprint) *acme.Account {
	return &acme.Account{Key: []byte(`{}`), KeyThumbprint: thumb, Status: acme.StatusValid, CreatedAt: fixedNow()}
}

// processingOrder stores a processing order of account a and returns it.
func processingOrder(t *testing.T, s *Store, a *acme.Account, id string) *acme.Order {
	t.Helper()
	o := &acme.Order{ID: acme.OrderID(id), AccountID: a.ID, Status: acme.StatusProcessing,
		Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: id + ".example"}},
		Expires:     fixedNow().Add(time.Hour), CreatedAt: fixedNow()}
	if err := s.CreateOrder(t.Context(), o, nil); err != nil {
		t.Fatalf("CreateOrder: %v", err)
	}
	return o
}

// certFor returns an unstored certificate finalizing o.
func certFor(o *acme.Order, serial string) *acme.Certificate {
	return &acme.Certificate{Serial: serial, AccountID: o.AccountID, OrderID: o.ID, DER: []byte("der"),
		Names: []string{o.Identifiers[0].Value}, NotBefore: fixedNow(), NotAfter: fixedNow().Add(time.Hour), IssuedAt: fixedNow()}
}

// countRowsOf returns the number of rows of table.
func countRowsOf(t *testing.T, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRowContext(t.Context(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("counting %s: %v", table, err)
	}
	return n
}

// TestGroupCommitIsolatesFailures runs writes that fail and writes that
// succeed in one transaction: each gets its own result, and a failed one
// (a compare-and-set conflict, a uniqueness conflict) writes nothing while
// the others commit.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	a := newAccount("a")
	if err := s.CreateAccount(ctx, a); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	o := processingOrder(t, s, a, "o1")
	commits := s.commits.Load()

	release := holdWriter(t, s)
	first := async(func() error { return s.FinalizeOrder(ctx, certFor(o, "01")) })
	waitQueued(t, s, 1)
	second := async(func() error { return s.FinalizeOrder(ctx, certFor(o, "02")) })
	waitQueued(t, s, 2)
	b := newAccount("b")
	created := async(func() error { return s.CreateAccount(ctx, b) })
	waitQueued(t, s, 3)
	dup := async(func() error { return s.CreateAccount(ctx, newAccount("a")) })
	waitQueued(t, s, 4)
	mustRelease(t, release)

	if err := <-first; err != nil {
		t.Errorf("first FinalizeOrder: %v", err)
	}
	if err := <-second; !errors.Is(err, acme.ErrConflict) {
		t.Errorf("second FinalizeOrder: got %v, want an error wrapping %v", err, acme.ErrConflict)
	}
	if err := <-created; err != nil {
		t.Errorf("CreateAccount: %v", err)
	}
	if err := <-dup; !errors.Is(err, acme.ErrConflict) {
		t.Errorf("CreateAccount with a taken key: got %v, want an error wrapping %v", err, acme.ErrConflict)
	}
	if got := s.commits.Load() - commits; got != 1 {
		t.Errorf("the writes took %d commits, want 1", got)
	}

	got, err := s.GetOrder(ctx, o.ID)
	if err != nil {
		t.Fatalf("GetOrder: %v", err)
	}
	if got.Status != acme.StatusValid || got.CertSerial != "01" {
		t.Errorf("order: status %s, serial %q; want valid, %q", got.Status, got.CertSerial, "01")
	}
	if n := countRowsOf(t, s, "certificates"); n != 1 {
		t.Errorf("certificates: got %d, want 1", n)
	}
	if got, err := s.GetAccountByKey(ctx, "b"); err != nil || got.ID != b.ID {
		t.Errorf("GetAccountByKey(b): got %v, %v; want account %s", got, err, b.ID)
	}
	if n := countRowsOf(t, s, "accounts"); n != 2 {
		t.Errorf("accounts: got %d, want 2", n)
	}
}

// TestGroupCommitFailureFailsAll checks that when a group's COMMIT fails,
// every write of the group fails and none is stored.
func TestGroupCommitFailureFailsAll(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()

	release := holdWriter(t, s)
	created := async(func() error { return s.CreateAccount(ctx, newAccount("a")) })
	waitQueued(t, s, 1)
	// A write whose foreign key violation is deferred to the COMMIT, which
	// it makes fail.
	bad := async(func() error {
		return s.write(ctx, func(w *writeTx) error {
			if _, err := w.tx.ExecContext(writeCtx, `PRAGMA defer_foreign_keys = ON`); err != nil {
				return err
			}
			_, err := w.tx.ExecContext(writeCtx,
				`INSERT INTO orders (id, account_id, status, identifiers, authz_ids, expires, created_at)
				 VALUES ('dangling', 9999, 'pending', '[]', '[]', 0, 0)`)
			return err
		})
	})
	waitQueued(t, s, 2)
	if err := release(); err == nil {
		t.Error("holding write: succeeded, want the COMMIT's error")
	}

	for name, c := range map[string]<-chan error{"CreateAccount": created, "dangling insert": bad} {
		if err := <-c; err == nil {
			t.Errorf("%s: succeeded, want the COMMIT's error", name)
		}
	}
	if n := countRowsOf(t, s, "accounts"); n != 0 {
		t.Errorf("accounts: got %d, want 0", n)
	}
	if n := countRowsOf(t, s, "orders"); n != 0 {
		t.Errorf("orders: got %d, want 0", n)
	}
	// The writer goes on.
	if err := s.CreateAccount(ctx, newAccount("b")); err != nil {
		t.Errorf("CreateAccount after the failed group: %v", err)
	}
}

// TestGroupCommitLostTransaction checks the case of a write whose failure
// ends the whole transaction (as SQLite does on a full disk or an I/O
// error): it fails, and the other writes of the group, before and after it,
// are run again and stored.
func TestGroupCommitLostTransaction(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	errLost := errors.New("lost the transaction")

	release := holdWriter(t, s)
	a, b := newAccount("a"), newAccount("b")
	before := async(func() error { return s.CreateAccount(ctx, a) })
	waitQueued(t, s, 1)
	lost := async(func() error {
		return s.write(ctx, func(w *writeTx) error {
			if _, err := w.tx.ExecContext(writeCtx, `ROLLBACK`); err != nil {
				return err
			}
			return errLost
		})
	})
	waitQueued(t, s, 2)
	after := async(func() error { return s.CreateAccount(ctx, b) })
	waitQueued(t, s, 3)
	mustRelease(t, release)

	if err := <-before; err != nil {
		t.Errorf("CreateAccount before: %v", err)
	}
	if err := <-lost; !errors.Is(err, errLost) {
		t.Errorf("write that ended the transaction: got %v, want %v", err, errLost)
	}
	if err := <-after; err != nil {
		t.Errorf("CreateAccount after: %v", err)
	}
	for _, want := range []*acme.Account{a, b} {
		got, err := s.GetAccountByKey(ctx, want.KeyThumbprint)
		if err != nil {
			t.Errorf("GetAccountByKey(%s): %v", want.KeyThumbprint, err)
			continue
		}
		if got.ID != want.ID {
			t.Errorf("account %s: stored with ID %s, CreateAccount set %s", want.KeyThumbprint, got.ID, want.ID)
		}
	}
}

// TestWritePanic checks that a write that panics raises the panic in its
// caller, writes nothing and leaves the writes grouped with it alone.
func TestWritePanic(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()

	release := holdWriter(t, s)
	created := async(func() error { return s.CreateAccount(ctx, newAccount("a")) })
	waitQueued(t, s, 1)
	panicked := async(func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return s.write(ctx, func(w *writeTx) error {
			if _, err := w.exec(wInsertAccount, "p", []byte(`{}`), "[]", "valid", 0, "", ""); err != nil {
				return err
			}
			panic("boom")
		})
	})
	waitQueued(t, s, 2)
	mustRelease(t, release)

	if err := <-created; err != nil {
		t.Errorf("CreateAccount: %v", err)
	}
	if err := <-panicked; err == nil || err.Error() != "panic: boom" {
		t.Errorf("panicking write: got %v, want the panic raised again", err)
	}
	if _, err := s.GetAccountByKey(ctx, "p"); !errors.Is(err, acme.ErrNotFound) {
		t.Errorf("account inserted by the panicking write: got %v, want an error wrapping %v", err, acme.ErrNotFound)
	}
	if _, err := s.GetAccountByKey(ctx, "a"); err != nil {
		t.Errorf("GetAccountByKey(a): %v", err)
	}
}

// TestWriteCanceledWhileQueued checks that a write whose context ends
// while it waits in the queue fails and writes nothing.
func TestWriteCanceledWhileQueued(t *testing.T) {
	s := openTemp(t)
	ctx, cancel := context.WithCancel(t.Context())

	release := holdWriter(t, s)
	created := async(func() error { return s.CreateAccount(ctx, newAccount("a")) })
	waitQueued(t, s, 1)
	cancel()
	mustRelease(t, release)

	if err := <-created; !errors.Is(err, context.Canceled) {
		t.Errorf("CreateAccount: got %v, want an error wrapping %v", err, context.Canceled)
	}
	if n := countRowsOf(t, s, "accounts"); n != 0 {
		t.Errorf("accounts: got %d, want 0", n)
	}
}

// TestCloseWaitsForWrites checks that Close lets the queued writes finish,
// stops the writer, and that writes after it fail.
func TestCloseWaitsForWrites(t *testing.T) {
	path := t.TempDir() + "/weir.db"
	s, err := Open(t.Context(), path, fixedNow)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	ctx := t.Context()

	release := holdWriter(t, s)
	created := async(func() error { return s.CreateAccount(ctx, newAccount("a")) })
	waitQueued(t, s, 1)
	closed := async(s.Close)
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a write was in progress", err)
	case <-time.After(50 * time.Millisecond):
	}
	mustRelease(t, release)
	if err := <-created; err != nil {
		t.Errorf("CreateAccount queued before Close: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-s.writerDone:
	default:
		t.Error("the writer goroutine is still running after Close")
	}
	if err := s.CreateAccount(ctx, newAccount("b")); !errors.Is(err, errStoreClosed) {
		t.Errorf("CreateAccount after Close: got %v, want %v", err, errStoreClosed)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	s = openAt(t, path)
	if _, err := s.GetAccountByKey(ctx, "a"); err != nil {
		t.Errorf("after reopening: GetAccountByKey(a): %v", err)
	}
}

// TestConcurrentWritesGroup checks, under -race, many concurrent writes of
// several kinds: each gets the result it would get alone.
func TestConcurrentWritesGroup(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	a := newAccount("a")
	if err := s.CreateAccount(ctx, a); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	const n = 40
	orders := make([]*acme.Order, n)
	for i := range orders {
		orders[i] = processingOrder(t, s, a, fmt.Sprintf("o%d", i))
	}
	commits := s.commits.Load()

	var wg sync.WaitGroup
	errs := make([]error, 3*n)
	for i := range n {
		// Two finalizations per order: exactly one wins. And an account.
		for j := range 2 {
			wg.Go(func() { errs[2*i+j] = s.FinalizeOrder(ctx, certFor(orders[i], fmt.Sprintf("%02x%d", i, j))) })
		}
		wg.Go(func() { errs[2*n+i] = s.CreateAccount(ctx, newAccount(acme.Thumbprint(fmt.Sprintf("k%d", i)))) })
	}
	wg.Wait()
	for i := range n {
		e0, e1 := errs[2*i], errs[2*i+1]
		if (e0 == nil) == (e1 == nil) || !errors.Is(errors.Join(e0, e1), acme.ErrConflict) {
			t.Errorf("order %d: finalizations returned %v and %v, want one nil and one conflict", i, e0, e1)
		}
		if err := errs[2*n+i]; err != nil {
			t.Errorf("CreateAccount %d: %v", i, err)
		}
	}
	if got := countRowsOf(t, s, "certificates"); got != n {
		t.Errorf("certificates: got %d, want %d", got, n)
	}
	if got := countRowsOf(t, s, "accounts"); got != n+1 {
		t.Errorf("accounts: got %d, want %d", got, n+1)
	}
	t.Logf("%d writes in %d commits", 3*n, s.commits.Load()-commits)
}

// TestLingerPlan: the writer waits for more writes only when the group is
// small and the last group finished less than lingerBusy ago; never on the
// first group, nor with a full group queued. After a transaction of one
// operation it waits lingerLone, after one of several lingerMax, and after
// one of more than lingerGroup operations for twice as many, twice as long.
func TestLingerPlan(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	busy := now.Add(-time.Millisecond)
	cases := []struct {
		name      string
		queued    int
		lastOps   int
		last      time.Time
		wantGroup int
		wantWait  time.Duration
	}{
		{"first group ever", 1, 0, time.Time{}, 0, 0},
		{"busy after a lone operation", 1, 1, busy, lingerGroup, lingerLone},
		{"busy after a lone operation, several queued", 3, 1, busy, lingerGroup, lingerLone},
		{"busy after a transaction of two", 1, 2, busy, lingerGroup, lingerMax},
		{"busy, just under the group size", lingerGroup - 1, 3, busy, lingerGroup, lingerMax},
		{"busy, a full group", lingerGroup, 3, busy, 0, 0},
		{"busy after a large transaction", lingerGroup, lingerGroup + 1, busy, 2 * lingerGroup, 2 * lingerMax},
		{"busy after a transaction of lingerGroup", 1, lingerGroup, busy, lingerGroup, lingerMax},
		{"busy after a large transaction, just under", 2*lingerGroup - 1, 40, busy, 2 * lingerGroup, 2 * lingerMax},
		{"busy after a large transaction, a full group", 2 * lingerGroup, 40, busy, 0, 0},
		{"idle since lingerBusy", 1, 40, now.Add(-lingerBusy), 0, 0},
		{"idle for a second", 1, 1, now.Add(-time.Second), 0, 0},
	}
	for _, c := range cases {
		if group, wait := lingerPlan(c.queued, c.lastOps, c.last, now); group != c.wantGroup || wait != c.wantWait {
			t.Errorf("%s: lingerPlan(%d, %d, now-%s) = %d, %s; want %d, %s",
				c.name, c.queued, c.lastOps, now.Sub(c.last), group, wait, c.wantGroup, c.wantWait)
		}
	}
}
