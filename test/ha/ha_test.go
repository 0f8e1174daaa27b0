// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"fmt"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/ca"
)

// TestThreeReplicas: 200 orders (8 clients, one account each, one or
// two names per order, http-01) through a round-robin that sends every
// request to the next of three replicas all complete; every chain
// verifies to the root; each replica served a substantial share; the
// certificates table holds exactly the 200 certificates the clients got,
// byte for byte; no client saw anything but successes and retryable
// answers.
func TestThreeReplicas(t *testing.T) {
	_, dsn := requirePostgres(t)
	rs := startRedis(t)
	cl := startCluster(t, clusterOpts{dsn: dsn, redis: rs})
	pids := cl.pids()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	const orders = 200
	res := cl.runLoad(ctx, loadOpts{label: "three", workers: 8, target: orders, attempts: 1, perIssue: time.Minute}, nil)
	t.Logf("%d certificates in %s (%d attempts)", len(res.certs), res.elapsed.Round(time.Millisecond), res.attempts.Load())
	if len(res.fatal) > 0 || len(res.certs) != orders {
		t.Fatalf("%d of %d certificates issued; failures:%s\n%s", len(res.certs), orders, res.summary(), strings.Join(res.fatal, "\n"))
	}
	for _, is := range res.certs {
		if err := cl.verify(is); err != nil {
			t.Error(err)
		}
	}

	dials := cl.dials()
	var total int64
	for _, d := range dials {
		total += d
	}
	t.Logf("dials per replica: %v (total %d)", dials, total)
	for i, d := range dials {
		// Round-robin over three: a third each; a quarter is
		// substantial whatever the interleaving of the clients.
		if d*4 < total {
			t.Errorf("replica %d took %d of %d connections, less than a quarter", i+1, d, total)
		}
	}

	stored := checkReceived(t, ctx, cl.db, res.certs)
	if len(stored) != orders {
		t.Errorf("the certificates table holds %d rows, want exactly %d", len(stored), orders)
	}
	hw, err := halfWritten(ctx, cl.db)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hw {
		t.Error(h)
	}
	recs := cl.rec.all()
	t.Logf("%d responses: %s", len(recs), kinds(recs))
	for _, r := range recs {
		if !r.retryable() {
			t.Errorf("%s %s on replica %d: %s", r.method, r.path, cl.replicaOf(r.replica), r.kind())
		}
	}
	cl.alive(t, pids)
}

// TestOvershootAcrossReplicas: the limits stay exact when the spends of
// one bucket are spread over three replicas. 20 new-account requests
// from one IP at once (account-creation, burst 2) make exactly 2
// accounts; for each of them, 30 and then 60 new-order requests at once
// (order-creation, burst 5) make exactly 5 orders; every other request is
// a 429 rateLimited with the exact Retry-After, Link rel="help", a nonce
// and a detail naming limit and key, as the single-node
// TestRateLimitLayers asserts; and the store holds exactly the admitted
// objects.
func TestOvershootAcrossReplicas(t *testing.T) {
	_, dsn := requirePostgres(t)
	rs := startRedis(t)
	cl := startCluster(t, clusterOpts{dsn: dsn, redis: rs, limits: `  global: { enabled: false }
  account-creation: { enabled: true, per-ip-per-hour: 5, burst: 2 }
  order-creation: { enabled: true, orders-per-account-per-hour: 20, order-burst: 5, san-budget-per-account-per-hour: 100 }
`})
	pids := cl.pids()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	start := time.Now()
	const n = 20
	ares, accts, err := cl.raceAccounts(ctx, cl.lb, n)
	if err != nil {
		t.Fatal(err)
	}
	checkRace(t, "account-creation", ares, n, accountBurst, "account-creation", "127.0.0.1", accountRA)
	t.Logf("new-account answers: %s", cl.byReplica(start, "/acme/new-account"))
	if got, err := countRows(ctx, cl, `SELECT count(*) FROM accounts`); err != nil || got != accountBurst {
		t.Errorf("accounts in PostgreSQL: %d (%v), want %d", got, err, accountBurst)
	}
	if len(accts) == 0 {
		t.Fatal("no account to race orders with")
	}

	for i, a := range accts {
		n := 30 * (i + 1)
		start := time.Now()
		ores, err := cl.raceOrders(ctx, cl.lb, a, n, fmt.Sprintf("acct%s", a.id))
		if err != nil {
			t.Fatal(err)
		}
		checkRace(t, "order-creation of account "+a.id, ores, n, orderBurst, "order-creation", a.id, orderRA)
		t.Logf("new-order answers: %s", cl.byReplica(start, "/acme/new-order"))
		if served := cl.replicasServing(start, "/acme/new-order"); len(served) != 3 {
			t.Errorf("the new-order requests reached replicas %v, want all three", served)
		}
		if got, err := countRows(ctx, cl, `SELECT count(*) FROM orders WHERE account_id = $1`, a.id); err != nil || got != orderBurst {
			t.Errorf("orders of account %s in PostgreSQL: %d (%v), want %d", a.id, got, err, orderBurst)
		}
	}
	t.Logf("limiter decisions the backend could not make (admitted by on-backend-error: allow), per replica: %v", cl.backendErrors())
	cl.alive(t, pids)
}

// probeOverrides give the probe account (the store's first, account 1)
// and the probe IP (192.0.2.7, sent as X-Forwarded-For through a trusted
// loopback proxy) the tight limits of TestOvershootAcrossReplicas while
// the load runs under loadLimits.
const probeOverrides = `  overrides:
    - { limit: order-creation, key: "account:1", orders-per-account-per-hour: 20, order-burst: 5, san-budget-per-account-per-hour: 100 }
    - { limit: account-creation, key: "ip:192.0.2.7", per-ip-per-hour: 5, burst: 2 }
`

const probeIP = "192.0.2.7"

// TestKillReplicaUnderLoad: replica 2 is SIGKILLed under issuance load,
// while requests of the load are in flight on it and it holds a
// catcher client's validation in the middle (the http-01 responder holds
// its request) and the catcher's finalization in the middle (a row lock
// holds the INSERT of its certificate). Workers start a failed issuance
// again from a new order; the catcher sends its finalize again through
// the balancer and must get its certificate. Then:
//
//	(a) every certificate a client received is in PostgreSQL with
//	    identical DER, and the load reaches its target on the survivors;
//	(b) no order stayed processing longer than the lease + 10 s (a
//	    monitor polls every 250 ms until lease + 10 s after the kill);
//	(c) no challenge is left processing, every validation replica 2
//	    had claimed was finished by a survivor, which holds its lease,
//	    and every order it was finalizing is valid;
//	(d) the limits stay exact on the two survivors (the overshoot
//	    races of TestOvershootAcrossReplicas, on a probe account and a
//	    probe IP with overrides).
func TestKillReplicaUnderLoad(t *testing.T) {
	_, dsn := requirePostgres(t)
	rs := startRedis(t)
	cl := startCluster(t, clusterOpts{dsn: dsn, redis: rs, limits: loadLimits + probeOverrides, trustProxies: true})
	pids := cl.pids()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()

	// The probe account first, so that it is account 1.
	probe := cl.registerRaw(t, ctx)
	if probe.id != "1" {
		t.Fatalf("the first account of the fresh schema is %q, not 1: the override account:1 does not name the probe account", probe.id)
	}
	owners := cl.owners(t, ctx)

	// The catcher: an account of its own with an order ready to
	// finalize (F) and one whose challenge is still pending (V), which it
	// will send to replica 2 alone.
	catcher := cl.acmeClient(nil)
	catchAcct, err := catcher.Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
	if err != nil {
		t.Fatal(err)
	}
	fOrder, err := catcher.AuthorizeOrder(ctx, xacme.DomainIDs("catch-f.ha.weir.test"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.authorize(ctx, catcher, fOrder); err != nil {
		t.Fatal(err)
	}
	if fOrder, err = pollOrder(ctx, catcher, fOrder.URI); err != nil {
		t.Fatal(err)
	}
	fCSR, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{DNSNames: []string{"catch-f.ha.weir.test"}}, newKey())
	if err != nil {
		t.Fatal(err)
	}
	vOrder, err := catcher.AuthorizeOrder(ctx, xacme.DomainIDs("catch-v.ha.weir.test"))
	if err != nil {
		t.Fatal(err)
	}
	vChal, err := http01(ctx, catcher, vOrder.AuthzURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	ka, _ := catcher.HTTP01ChallengeResponse(vChal.Token)
	cl.resp.set(vChal.Token, ka)
	toReplica2 := &xacme.Client{Key: catcher.Key, KID: xacme.KeyID(catchAcct.URI), DirectoryURL: cl.base + "/directory",
		HTTPClient: cl.direct(1), UserAgent: "weir-ha-test", RetryBackoff: backoff}

	mon := startMonitor(cl.db)
	defer mon.finish()
	const target = 60
	reached := make(chan struct{})
	var once sync.Once
	var progress atomic.Int64
	loadDone := make(chan *loadResult, 1)
	go func() {
		loadDone <- cl.runLoad(ctx, loadOpts{label: "kill", workers: 6, target: target, attempts: 10, perIssue: time.Minute}, func(n int64) {
			progress.Store(n)
			if n >= 15 {
				once.Do(func() { close(reached) })
			}
		})
	}()
	select {
	case <-reached:
	case res := <-loadDone:
		t.Fatalf("the load ended before the kill: %d certificates; failures:%s", len(res.certs), res.summary())
	}

	// Catch replica 2 in the middle of a finalization and of a
	// validation, under the load, then kill it. Finalization: the test
	// holds the catcher's account row FOR UPDATE, so the INSERT of its
	// certificate (whose foreign key locks that row) waits inside
	// replica 2's FinalizeOrder transaction, after the order moved to
	// processing; nothing else of the load waits. Validation: the
	// http-01 responder holds the answers to replica 2's validations,
	// and the kill comes as soon as one waits, before replica 2's
	// validation timeout (challenges.timeout, 2 s) gives up.
	lockTx, err := cl.db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lockTx.Rollback(context.Background())
	if _, err := lockTx.Exec(ctx, `SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, path.Base(catchAcct.URI)); err != nil {
		t.Fatal(err)
	}
	fDone := make(chan error, 1)
	go func() {
		_, _, err := toReplica2.CreateOrderCert(ctx, fOrder.FinalizeURL, fCSR, true)
		fDone <- err
	}()
	fID := path.Base(fOrder.URI)
	finalizing := false
	deadline := time.Now().Add(10 * time.Second)
	for !finalizing && time.Now().Before(deadline) {
		jobs, err := processingOrdersLeased(ctx, cl.db)
		if err != nil {
			t.Logf("orders have no finalize lease to read (%v)", err)
			break
		}
		for _, j := range jobs {
			finalizing = finalizing || j.id == fID && j.owner == owners[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cl.resp.hold(ctx, owners[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := toReplica2.Accept(ctx, vChal); err != nil {
		t.Fatalf("accepting the catcher's challenge on replica 2: %v", err)
	}
	deadline = time.Now().Add(5 * time.Second)
	for cl.resp.held.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	held := cl.resp.held.Load()
	snapshot, err := processingChallenges(ctx, cl.db)
	if err != nil {
		t.Fatal(err)
	}
	orderSnap, _ := processingOrdersLeased(ctx, cl.db)
	killAt := time.Now()
	if err := cl.procs[1].Kill(); err != nil {
		t.Fatal(err)
	}
	cl.resp.unhold()
	if err := lockTx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	var claimed, finalizations []leasedJob
	for _, j := range snapshot {
		if j.owner == owners[1] {
			claimed = append(claimed, j)
		}
	}
	for _, j := range orderSnap {
		if j.owner == owners[1] {
			finalizations = append(finalizations, j)
		}
	}
	t.Logf("killed replica 2 (pid %d) after %d certificates, holding %d validations in the middle; %d challenges processing then, %d of them leased to it; %d orders processing, %d of them leased to it",
		cl.procs[1].PID, progress.Load(), held, len(snapshot), len(claimed), len(orderSnap), len(finalizations))
	if held == 0 {
		t.Errorf("replica 2 was not caught validating the catcher's challenge within 5 s")
	}
	if !finalizing {
		t.Errorf("replica 2 was not caught finalizing the catcher's order (processing, leased to it) within 10 s")
	}
	if err := <-fDone; err == nil {
		t.Errorf("the catcher's finalize on replica 2 succeeded although replica 2 was killed in the middle")
	} else {
		t.Logf("the catcher's finalize on replica 2: %v", err)
	}

	// The catcher does what a client does after a lost response: the
	// same finalize again, through the balancer. It must get the
	// certificate a survivor issues once replica 2's lease ends.
	limit := validationLease + 10*time.Second
	var fChain [][]byte
	{
		cctx, ccancel := context.WithDeadline(ctx, killAt.Add(limit))
		fChain, _, err = catcher.CreateOrderCert(cctx, fOrder.FinalizeURL, fCSR, true)
		ccancel()
	}
	if err != nil {
		t.Errorf("the catcher's finalize again after the kill: %v", err)
	} else {
		is := &issued{chain: fChain, names: []string{"catch-f.ha.weir.test"}, order: fOrder.URI}
		if leaf, perr := x509.ParseCertificate(fChain[0]); perr == nil {
			is.serial = ca.SerialHex(leaf.SerialNumber)
		}
		if err := cl.verify(is); err != nil {
			t.Error(err)
		}
		checkReceived(t, ctx, cl.db, []*issued{is})
		t.Logf("the catcher's repeated finalize got serial %s %s after the kill", is.serial, time.Since(killAt).Round(time.Millisecond))
	}
	{
		cctx, ccancel := context.WithDeadline(ctx, killAt.Add(limit))
		err = pollAuthz(cctx, catcher, vOrder.AuthzURLs[0])
		ccancel()
	}
	if err != nil {
		t.Errorf("the catcher's authorization validated by replica 2 when it was killed: %v", err)
	} else {
		t.Logf("the catcher's authorization is valid %s after the kill", time.Since(killAt).Round(time.Millisecond))
	}

	res := <-loadDone
	loadEnd := res.start.Add(res.elapsed)
	t.Logf("load: %d certificates in %s, %d attempts, %d failed (%d on transport errors):%s",
		len(res.certs), res.elapsed.Round(time.Millisecond), res.attempts.Load(), len(res.failures), res.netErrs.Load(), res.summary())
	if len(res.fatal) > 0 || len(res.certs) != target {
		t.Errorf("the load did not complete on the survivors: %d of %d certificates: %s", len(res.certs), target, strings.Join(res.fatal, "; "))
	}
	for _, is := range res.certs {
		if err := cl.verify(is); err != nil {
			t.Error(err)
		}
	}
	t.Logf("dials per replica: %v", cl.dials())
	t.Logf("responses after the kill: %s", kinds(cl.rec.since(killAt)))

	// (d) The limits on the two survivors.
	raceStart := time.Now()
	ores, err := cl.raceOrders(ctx, cl.lb, probe, 30, "probe")
	if err != nil {
		t.Fatal(err)
	}
	checkRace(t, "order-creation of the probe account after the kill", ores, 30, orderBurst, "order-creation", probe.id, orderRA)
	xff := cl.client(cl.rr.DialContext, probeIP)
	ares, _, err := cl.raceAccounts(ctx, xff, 20)
	if err != nil {
		t.Fatal(err)
	}
	checkRace(t, "account-creation of the probe IP after the kill", ares, 20, accountBurst, "account-creation", probeIP, accountRA)
	t.Logf("limiter decisions the backend could not make, per replica: %v", cl.backendErrors())
	for _, p := range []string{"/acme/new-order", "/acme/new-account"} {
		served := cl.replicasServing(raceStart, p)
		if served[2] > 0 || served[1] == 0 || served[3] == 0 {
			t.Errorf("the races' %s requests reached replicas %v, want 1 and 3 only", p, served)
		}
	}

	// (b), (c): wait until lease + 10 s after the kill.
	if wait := time.Until(killAt.Add(limit + time.Second)); wait > 0 {
		t.Logf("waiting %s, until lease (%s) + 10 s after the kill", wait.Round(time.Millisecond), validationLease)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
	mon.finish()
	ord, chs, overOrders, overChals := mon.report(limit)
	t.Logf("%s; %s", ord, chs)
	for _, o := range overOrders {
		t.Errorf("order %s stayed processing longer than the lease + 10 s (%s); an order left in processing by a replica killed while finalizing is only recovered with finalize leases", o, limit)
	}
	for _, c := range overChals {
		t.Errorf("challenge %s stayed processing longer than the lease + 10 s (%s)", c, limit)
	}
	left, err := processingChallenges(ctx, cl.db)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range left {
		t.Errorf("challenge %s is still processing, leased to %q until %s, %s after the kill", j.id, j.owner, j.until.Format(time.RFC3339Nano), time.Since(killAt).Round(time.Millisecond))
	}
	var stale int
	if err := cl.db.QueryRow(ctx, `SELECT count(*) FROM challenges
		WHERE status <> 'processing' AND (lease_owner IS NOT NULL OR lease_until IS NOT NULL)`).Scan(&stale); err != nil {
		t.Fatal(err)
	}
	if stale > 0 {
		t.Errorf("%d settled challenges still carry a lease: recording a validation's outcome must free it", stale)
	}
	var recovered time.Duration
	for _, j := range claimed {
		status, owner, validated, err := challengeState(ctx, cl.db, j.id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case status == "processing":
			// Reported above.
		case owner != "":
			t.Errorf("challenge %s (claimed by replica 2) is %s and still leased to %q", j.id, status, owner)
		case status == "valid" && !validated.IsZero() && validated.Before(killAt):
			// Replica 2 finished it between the snapshot and the kill.
			t.Logf("challenge %s was finished by replica 2 itself just before the kill", j.id)
		case status != "valid":
			t.Errorf("challenge %s (claimed by replica 2) was taken over but is %s, want valid (its responder answers)", j.id, status)
		}
		// Otherwise it was validated after the kill: by a survivor.
		if last, ended := mon.lastSeen(j.id); ended && last.Sub(killAt) > recovered {
			recovered = last.Sub(killAt)
		}
	}
	t.Logf("replica 2's %d claimed validations finished by the survivors within %s of the kill (last seen processing; lease %s, claim every %s); load finished %s after the kill",
		len(claimed), recovered.Round(time.Millisecond), validationLease, claimInterval, loadEnd.Sub(killAt).Round(time.Millisecond))
	recovered = 0
	for _, j := range finalizations {
		status, serial, err := orderState(ctx, cl.db, j.id)
		if err != nil {
			t.Fatal(err)
		}
		if status != "valid" || serial == "" {
			t.Errorf("order %s, which replica 2 was finalizing, is %s (serial %q) after lease + 10 s, want valid: no survivor finished its finalization", j.id, status, serial)
		}
		if last, ended := mon.lastSeenOrder(j.id); ended && last.Sub(killAt) > recovered {
			recovered = last.Sub(killAt)
		}
	}
	t.Logf("replica 2's %d finalizations finished by the survivors within %s of the kill (last seen processing)", len(finalizations), recovered.Round(time.Millisecond))

	// (a) Nothing issued is lost.
	stored := checkReceived(t, ctx, cl.db, res.certs)
	t.Logf("%d certificates in PostgreSQL, %d received by the load's clients", len(stored), len(res.certs))
	hw, err := halfWritten(ctx, cl.db)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hw {
		t.Error(h)
	}
	cl.alive(t, pids, 1)
}
