// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/storage/postgres"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
	"github.com/weir-pki/weir/storage/sqlite"
)

// Replicas sharing one store: the takeover of validation jobs whose
// replica died, and the hand-over of the queued jobs of a replica that
// stops. The stores are real: SQLite always, and PostgreSQL when
// WEIR_TEST_POSTGRES_DSN is set. Time is a fake clock that the test moves
// past a lease; the claims run every few milliseconds of real time.

// newFakeClock returns the replicas' clock (nonce_test.go).
func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)}
}

// openSQLite opens a SQLite store in a new directory, closed when the
// test ends.
func openSQLite(t *testing.T) acme.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "weir.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openPostgres opens a PostgreSQL store on a fresh schema of the test
// server, dropped when the test ends.
func openPostgres(t *testing.T) acme.Store {
	t.Helper()
	_, dsn := pgtest.Schema(t, "weir_acme_")
	return openPostgresDSN(t, dsn, 8)
}

// openPostgresDSN opens a PostgreSQL store on dsn with at most maxConns
// connections, closed when the test ends.
func openPostgresDSN(t *testing.T, dsn string, maxConns int) acme.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := postgres.Open(ctx, postgres.Config{DSN: dsn, MaxConns: maxConns}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// forEachStore runs test on SQLite, and on PostgreSQL when the server is
// configured.
func forEachStore(t *testing.T, test func(t *testing.T, open func(*testing.T) acme.Store)) {
	t.Run("sqlite", func(t *testing.T) { test(t, openSQLite) })
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv("WEIR_TEST_POSTGRES_DSN") == "" {
			if os.Getenv("CI") == "true" {
				t.Fatal("WEIR_TEST_POSTGRES_DSN must be set in CI")
			}
			t.Skip("set WEIR_TEST_POSTGRES_DSN to run on PostgreSQL")
		}
		test(t, openPostgres)
	})
}

// recorder is a validator that passes every challenge and records the
// tokens it saw. While hold is set, each call first says so on started
// and then waits for hold to close.
type recorder struct {
	mu      sync.Mutex
	tokens  []string
	hold    chan struct{}
	started chan string
}

func (r *recorder) Validate(ctx context.Context, req acme.ValidationRequest) *acme.Problem {
	if r.hold != nil {
		r.started <- req.Token
		<-r.hold
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tokens = append(r.tokens, req.Token)
	return nil
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.tokens...)
}

// claimCounter counts the claims a replica makes.
type claimCounter struct {
	acme.Store
	claims atomic.Int64
}

func (c *claimCounter) ClaimChallenges(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*acme.Challenge, error) {
	c.claims.Add(1)
	return c.Store.ClaimChallenges(ctx, owner, now, lease, limit)
}

// replica makes a Service named owner on store, with one validation
// worker, a 10 s validation timeout (so a 20 s lease) and claims every
// 5 ms of real time.
func replica(t *testing.T, store acme.Store, owner string, now func() time.Time, v acme.Validator) *acme.Service {
	t.Helper()
	return limitedReplica(t, store, owner, now, v, nil)
}

// limitedReplica is replica with limits (nil: none).
func limitedReplica(t *testing.T, store acme.Store, owner string, now func() time.Time, v acme.Validator, limits acme.Limits) *acme.Service {
	t.Helper()
	svc := newService(t, acme.Config{Owner: owner, ValidationWorkers: 1, ValidationTimeout: 10 * time.Second,
		ClaimInterval: 5 * time.Millisecond}, acme.Deps{Store: store, Validator: v, Limits: limits, Now: now})
	if got, want := svc.Config().ValidationLease, 20*time.Second; got != want {
		t.Fatalf("ValidationLease = %s, want twice the validation timeout, %s", got, want)
	}
	return svc
}

// newService makes a Service of cfg and deps, with a CA of its own and
// the empty naming policy.
func newService(t *testing.T, cfg acme.Config, deps acme.Deps) *acme.Service {
	t.Helper()
	h, err := ca.GenerateHierarchy("lease test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if deps.CA, err = ca.New(ca.Config{Lifetime: time.Hour}, h, nil); err != nil {
		t.Fatal(err)
	}
	policy, err := acme.NewPolicy(acme.PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := acme.New(cfg, acme.Live{Policy: policy}, deps)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// start runs svc until the returned stop is called, which waits for Run
// to return (at most 10 s).
func start(t *testing.T, svc *acme.Service) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("Run did not return within 10 s of its context ending")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// seedAuthzs stores a valid account and an order of it with n pending
// authorizations, each with one pending http-01 challenge.
func seedAuthzs(t *testing.T, st acme.Store, now time.Time, n int) (acme.Caller, []*acme.Authorization) {
	t.Helper()
	ctx := t.Context()
	acct := &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: acme.Thumbprint("thumb-" + rand.Text()), Status: acme.StatusValid, CreatedAt: now}
	if err := st.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	o := &acme.Order{ID: acme.OrderID("order-" + rand.Text()), AccountID: acct.ID, Status: acme.StatusPending,
		Expires: now.Add(24 * time.Hour), CreatedAt: now}
	var authzs []*acme.Authorization
	for i := range n {
		a := &acme.Authorization{ID: acme.AuthzID(fmt.Sprintf("authz-%d-%s", i, rand.Text())), AccountID: acct.ID,
			Identifier: acme.Identifier{Type: acme.IdentifierDNS, Value: fmt.Sprintf("n%d.example.com", i)},
			Status:     acme.StatusPending, Expires: now.Add(24 * time.Hour), CreatedAt: now}
		a.Challenges = []*acme.Challenge{{ID: acme.ChallengeID(fmt.Sprintf("chall-%d-%s", i, rand.Text())), AuthzID: a.ID,
			Type: acme.ChallengeHTTP01, Token: fmt.Sprintf("token-%d", i), Status: acme.StatusPending, UpdatedAt: now}}
		o.Identifiers = append(o.Identifiers, a.Identifier)
		o.AuthzIDs = append(o.AuthzIDs, a.ID)
		authzs = append(authzs, a)
	}
	if err := st.CreateOrder(ctx, o, authzs); err != nil {
		t.Fatal(err)
	}
	return acme.Caller{Account: acct}, authzs
}

// waitFor polls cond until it holds, failing t after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// authzStatus reads the stored status of authorization id.
func authzStatus(t *testing.T, st acme.Store, id acme.AuthzID) acme.Status {
	t.Helper()
	a, err := st.GetAuthz(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a.Status
}

// TestValidationTakeover: replica A accepts a challenge, which claims its
// validation, and dies before validating it (its Run has ended, so the
// job is lost in its queue). Replica B, claiming every 5 ms, leaves the
// job alone while A's lease lives, and validates it, once, as soon as the
// lease has ended.
func TestValidationTakeover(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(*testing.T) acme.Store) {
		st := open(t)
		clock := newFakeClock()
		va, vb := &recorder{}, &recorder{}
		a := replica(t, st, "replica-a", clock.now, va)
		bStore := &claimCounter{Store: st}
		b := replica(t, bStore, "replica-b", clock.now, vb)
		caller, authzs := seedAuthzs(t, st, clock.now(), 1)
		ch := authzs[0].Challenges[0]

		start(t, a)() // A stops: nothing will validate what it accepts
		got, _, err := a.RespondChallenge(t.Context(), caller, ch.ID)
		if err != nil {
			t.Fatalf("RespondChallenge on A: %v", err)
		}
		if got.Status != acme.StatusProcessing {
			t.Fatalf("the challenge is %s after the POST, want processing", got.Status)
		}
		if err := st.ClaimChallenge(t.Context(), ch.ID, "someone-else", clock.now(), time.Second); !errors.Is(err, acme.ErrConflict) {
			t.Fatalf("claiming the challenge A accepted: %v, want ErrConflict (A's live lease)", err)
		}

		start(t, b)
		waitFor(t, "B to claim 5 times", func() bool { return bStore.claims.Load() >= 5 })
		if seen := vb.seen(); len(seen) != 0 {
			t.Fatalf("B validated %v while A's lease lived", seen)
		}
		if s := authzStatus(t, st, authzs[0].ID); s != acme.StatusPending {
			t.Fatalf("the authorization is %s while A's lease lives, want pending", s)
		}

		clock.advance(a.Config().ValidationLease) // A's lease ends now
		waitFor(t, "B to validate the challenge", func() bool { return authzStatus(t, st, authzs[0].ID) == acme.StatusValid })
		if seen := vb.seen(); len(seen) != 1 || seen[0] != ch.Token {
			t.Errorf("B validated %v, want [%s] once", seen, ch.Token)
		}
		if seen := va.seen(); len(seen) != 0 {
			t.Errorf("A, stopped, validated %v", seen)
		}
		c, err := st.GetChallenge(t.Context(), ch.ID)
		if err != nil || c.Status != acme.StatusValid {
			t.Errorf("the challenge is %v (%v), want valid", c, err)
		}
	})
}

// TestValidationHandOver: a replica that stops finishes the validation
// it is running and gives up the leases of the jobs still in its queue, so
// another replica takes them at once, without waiting for the leases to
// end (the clock does not move).
func TestValidationHandOver(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(*testing.T) acme.Store) {
		st := open(t)
		clock := newFakeClock()
		va := &recorder{hold: make(chan struct{}), started: make(chan string, 2)}
		vb := &recorder{}
		a := replica(t, st, "replica-a", clock.now, va)
		bStore := &claimCounter{Store: st}
		b := replica(t, bStore, "replica-b", clock.now, vb)
		caller, authzs := seedAuthzs(t, st, clock.now(), 2)
		first, second := authzs[0].Challenges[0], authzs[1].Challenges[0]

		stopA := start(t, a)
		if _, _, err := a.RespondChallenge(t.Context(), caller, first.ID); err != nil {
			t.Fatal(err)
		}
		select {
		case tok := <-va.started: // A's only worker is busy with the first
			if tok != first.Token {
				t.Fatalf("A validates %s first, want %s", tok, first.Token)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("A did not start validating within 10 s")
		}
		if _, _, err := a.RespondChallenge(t.Context(), caller, second.ID); err != nil {
			t.Fatal(err)
		}
		start(t, b)
		waitFor(t, "B to claim 5 times", func() bool { return bStore.claims.Load() >= 5 })
		if seen := vb.seen(); len(seen) != 0 {
			t.Fatalf("B validated %v, which A holds", seen)
		}

		stopped := make(chan struct{})
		go func() { stopA(); close(stopped) }()
		close(va.hold) // A's validation in progress finishes
		<-stopped
		if seen := va.seen(); len(seen) != 1 || seen[0] != first.Token {
			t.Errorf("A validated %v, want [%s]: the validation it was running", seen, first.Token)
		}
		waitFor(t, "B to validate the job A handed over", func() bool { return authzStatus(t, st, authzs[1].ID) == acme.StatusValid })
		if seen := vb.seen(); len(seen) != 1 || seen[0] != second.Token {
			t.Errorf("B validated %v, want [%s]", seen, second.Token)
		}
		if s := authzStatus(t, st, authzs[0].ID); s != acme.StatusValid {
			t.Errorf("the first authorization is %s, want valid (validated by A as it stopped)", s)
		}
	})
}

// seedReadyOrder stores a valid account and a ready order of it for one
// name, n0.example.com (its authorization already valid), and returns a
// CSR for the name.
func seedReadyOrder(t *testing.T, st acme.Store, now time.Time) (acme.Caller, *acme.Order, []byte) {
	t.Helper()
	caller, authzs := seedAuthzs(t, st, now, 1)
	a := authzs[0]
	a.Status = acme.StatusValid
	a.Challenges[0].Status, a.Challenges[0].Validated = acme.StatusValid, now
	if err := st.UpdateAuthz(t.Context(), a, acme.StatusPending); err != nil {
		t.Fatal(err)
	}
	ids, _, err := st.ListOrders(t.Context(), caller.Account.ID, "", 10)
	if err != nil || len(ids) != 1 {
		t.Fatalf("ListOrders: %v, %v", ids, err)
	}
	o, err := st.GetOrder(t.Context(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{DNSNames: []string{a.Identifier.Value}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return caller, o, csr
}

// orderStatus reads the stored status of order id.
func orderStatus(t *testing.T, st acme.Store, id acme.OrderID) acme.Status {
	t.Helper()
	o, err := st.GetOrder(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return o.Status
}

// TestFinalizeTakeover: replica A moves a ready order to processing (its
// finalize stored the CSR and took the lease) and dies before storing the
// certificate. Replica B leaves the order alone while A's lease lives,
// answers the client's retry of the same finalize with the order as it
// is (processing) and a different CSR with orderNotReady, then issues the
// certificate from the stored CSR, once, when the lease has ended.
func TestFinalizeTakeover(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(*testing.T) acme.Store) {
		st := open(t)
		clock := newFakeClock()
		b := replica(t, st, "replica-b", clock.now, &recorder{})
		caller, o, csr := seedReadyOrder(t, st, clock.now())
		lease := b.Config().ValidationLease
		if err := st.StartFinalize(t.Context(), o.ID, "replica-a", csr, clock.now(), lease); err != nil {
			t.Fatalf("StartFinalize as A: %v", err)
		}

		start(t, b)
		got, err := b.Finalize(t.Context(), caller, o.ID, csr)
		if err != nil {
			t.Fatalf("the retried finalize on B: %v", err)
		}
		if got.Status != acme.StatusProcessing {
			t.Errorf("the retried finalize on B returned a %s order, want processing", got.Status)
		}
		_, _, other := seedReadyOrder(t, st, clock.now())
		_, err = b.Finalize(t.Context(), caller, o.ID, other)
		if p := acme.AsProblem(err); p.Type != acme.ProbOrderNotReady {
			t.Errorf("a finalize with another CSR on the processing order: %v, want orderNotReady", err)
		}
		time.Sleep(50 * time.Millisecond) // B claims ten times meanwhile
		if s := orderStatus(t, st, o.ID); s != acme.StatusProcessing {
			t.Fatalf("the order is %s while A's lease lives, want processing", s)
		}

		clock.advance(lease) // A's lease ends now
		waitFor(t, "B to issue the order A left", func() bool { return orderStatus(t, st, o.ID) == acme.StatusValid })
		done, err := st.GetOrder(t.Context(), o.ID)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := st.GetCertificate(t.Context(), done.CertSerial)
		if err != nil {
			t.Fatalf("the certificate of the order B completed: %v", err)
		}
		leaf, err := x509.ParseCertificate(cert.DER)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := x509.ParseCertificateRequest(csr)
		if !leaf.PublicKey.(*ecdsa.PublicKey).Equal(req.PublicKey) || len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != "n0.example.com" {
			t.Errorf("B issued for key %v and names %v, want the CSR's key and [n0.example.com]", leaf.PublicKey, leaf.DNSNames)
		}
		got, err = b.Finalize(t.Context(), caller, o.ID, csr)
		if err != nil || got.Status != acme.StatusValid || got.CertSerial != done.CertSerial {
			t.Errorf("the retried finalize after B issued: %+v, %v; want the valid order with serial %s", got, err, done.CertSerial)
		}
		if n, err := st.ClaimOrders(t.Context(), "replica-c", clock.now().Add(24*time.Hour), lease, 10); err != nil || len(n) != 0 {
			t.Errorf("ClaimOrders after B issued: %v, %v; want nothing left to claim", n, err)
		}
	})
}

// TestCurrentCRLRefreshedByAge: only the holder of the CRL schedule's
// lease regenerates on the timer, so every replica's CurrentCRL makes its
// CRL anew once it is CRLInterval old, and not before.
func TestCurrentCRLRefreshedByAge(t *testing.T) {
	clock := newFakeClock()
	svc := replica(t, openSQLite(t), "replica-a", clock.now, &recorder{})
	made := func() time.Time {
		t.Helper()
		_, at, err := svc.CurrentCRL(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	first := made()
	clock.advance(svc.Config().CRLInterval - time.Second)
	if at := made(); !at.Equal(first) {
		t.Errorf("a CRL younger than CRLInterval was made anew at %v (the first at %v)", at, first)
	}
	clock.advance(time.Second)
	if at := made(); !at.Equal(clock.now()) {
		t.Errorf("a CRL CRLInterval old was served (made at %v, now %v), want a new one", at, clock.now())
	}
}
