// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// storedCerts returns the DER of every certificate in the store, by
// serial.
func storedCerts(ctx context.Context, db *pgxpool.Pool) (map[string][]byte, error) {
	rows, err := db.Query(ctx, `SELECT serial, der FROM certificates`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var serial string
		var der []byte
		if err := rows.Scan(&serial, &der); err != nil {
			return nil, err
		}
		out[serial] = der
	}
	return out, rows.Err()
}

// checkReceived fails the test for every certificate a client received
// that the store does not hold, byte for byte; it returns the store's.
func checkReceived(t *testing.T, ctx context.Context, db *pgxpool.Pool, got []*issued) map[string][]byte {
	t.Helper()
	stored, err := storedCerts(ctx, db)
	if err != nil {
		t.Fatalf("reading the certificates table: %v", err)
	}
	seen := map[string]bool{}
	lost := 0
	for _, is := range got {
		if seen[is.serial] {
			t.Errorf("serial %s was received twice", is.serial)
		}
		seen[is.serial] = true
		der, ok := stored[is.serial]
		switch {
		case !ok:
			lost++
			if lost <= 5 {
				t.Errorf("serial %s (order %s) was issued to a client but is not in PostgreSQL", is.serial, is.order)
			}
		case !bytes.Equal(der, is.chain[0]):
			t.Errorf("serial %s: the DER in PostgreSQL differs from the one the client received", is.serial)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d certificates received by clients are missing from PostgreSQL", lost, len(got))
	}
	return stored
}

// halfWritten lists what a use case left half done: a valid order
// without its certificate, a certificate whose order is not valid or
// names another serial.
func halfWritten(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	var out []string
	rows, err := db.Query(ctx, `SELECT o.id, o.cert_serial FROM orders o
		LEFT JOIN certificates c ON c.serial = o.cert_serial
		WHERE o.status = 'valid' AND c.serial IS NULL`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id, serial string
		if err := rows.Scan(&id, &serial); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, fmt.Sprintf("order %s is valid with serial %q, which is not in certificates", id, serial))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = db.Query(ctx, `SELECT c.serial, o.id, o.status, o.cert_serial FROM certificates c
		JOIN orders o ON o.id = c.order_id
		WHERE o.status <> 'valid' OR o.cert_serial <> c.serial`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var serial, id, status, oserial string
		if err := rows.Scan(&serial, &id, &status, &oserial); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, fmt.Sprintf("certificate %s belongs to order %s, which is %s with serial %q", serial, id, status, oserial))
	}
	rows.Close()
	return out, rows.Err()
}

// leasedJob is a challenge in processing and its lease.
type leasedJob struct {
	id, owner string
	until     time.Time
}

// processingJobs returns the rows of table (challenges or orders) in
// processing with their leases (lease_owner, lease_until: migrations
// 0003 and 0004).
func processingJobs(ctx context.Context, db *pgxpool.Pool, table string) ([]leasedJob, error) {
	rows, err := db.Query(ctx, `SELECT id, coalesce(lease_owner, ''), coalesce(lease_until, 0) FROM `+table+
		` WHERE status = 'processing' ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (leasedJob, error) {
		var j leasedJob
		var until int64
		err := r.Scan(&j.id, &j.owner, &until)
		if until != 0 {
			j.until = time.Unix(0, until)
		}
		return j, err
	})
}

// processingChallenges returns the challenges in processing.
func processingChallenges(ctx context.Context, db *pgxpool.Pool) ([]leasedJob, error) {
	return processingJobs(ctx, db, "challenges")
}

// processingOrdersLeased returns the orders in processing with their
// finalize lease.
func processingOrdersLeased(ctx context.Context, db *pgxpool.Pool) ([]leasedJob, error) {
	return processingJobs(ctx, db, "orders")
}

// processingOrders returns the IDs of the orders in processing.
func processingOrders(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	jobs, err := processingJobs(ctx, db, "orders")
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.id
	}
	return ids, err
}

// orderState reads an order's status and certificate serial.
func orderState(ctx context.Context, db *pgxpool.Pool, id string) (status, serial string, err error) {
	err = db.QueryRow(ctx, `SELECT status, cert_serial FROM orders WHERE id = $1`, id).Scan(&status, &serial)
	return status, serial, err
}

// challengeState reads a challenge's status, lease owner and when it
// was validated (zero if it was not).
func challengeState(ctx context.Context, db *pgxpool.Pool, id string) (status, owner string, validated time.Time, err error) {
	var ns int64
	err = db.QueryRow(ctx, `SELECT status, coalesce(lease_owner, ''), validated FROM challenges WHERE id = $1`, id).Scan(&status, &owner, &ns)
	if ns != 0 {
		validated = time.Unix(0, ns)
	}
	return status, owner, validated, err
}

// span is how long an object was seen in processing.
type span struct {
	first, last time.Time
	open        bool // still processing at the last poll
}

// monitor polls the orders and challenges in processing every 250 ms
// and records when each was first and last seen so, until stopped.
type monitor struct {
	db     *pgxpool.Pool
	mu     sync.Mutex
	orders map[string]*span
	chals  map[string]*span
	polls  int
	errs   int
	lastEr string
	stop   chan struct{}
	done   chan struct{}
}

func startMonitor(db *pgxpool.Pool) *monitor {
	m := &monitor{db: db, orders: map[string]*span{}, chals: map[string]*span{}, stop: make(chan struct{}), done: make(chan struct{})}
	go m.run()
	return m
}

func (m *monitor) run() {
	defer close(m.done)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		m.poll()
		select {
		case <-m.stop:
			m.poll()
			return
		case <-t.C:
		}
	}
}

func (m *monitor) poll() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	now := time.Now()
	orders, err := processingOrders(ctx, m.db)
	var chals []leasedJob
	if err == nil {
		chals, err = processingChallenges(ctx, m.db)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.polls++
	if err != nil {
		m.errs++
		m.lastEr = err.Error()
		return
	}
	update := func(spans map[string]*span, ids []string) {
		open := map[string]bool{}
		for _, id := range ids {
			open[id] = true
			s := spans[id]
			if s == nil {
				s = &span{first: now}
				spans[id] = s
			}
			s.last, s.open = now, true
		}
		for id, s := range spans {
			if !open[id] {
				s.open = false
			}
		}
	}
	update(m.orders, orders)
	var ids []string
	for _, c := range chals {
		ids = append(ids, c.id)
	}
	update(m.chals, ids)
}

// finish stops the monitor after a last poll.
func (m *monitor) finish() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
}

// longest returns the longest time an object of spans was seen in
// processing (last seen minus first seen), its ID, and the objects seen
// longer than limit; at is the end of the spans still open.
func longest(spans map[string]*span, limit time.Duration, at time.Time) (time.Duration, string, []string) {
	var max time.Duration
	var maxID string
	var over []string
	for id, s := range spans {
		d := s.last.Sub(s.first)
		if s.open {
			d = at.Sub(s.first)
		}
		if d > max || maxID == "" {
			max, maxID = d, id
		}
		if d > limit {
			state := "finished"
			if s.open {
				state = "still processing"
			}
			over = append(over, fmt.Sprintf("%s (%s, %s)", id, d.Round(time.Millisecond), state))
		}
	}
	sort.Strings(over)
	return max, maxID, over
}

// report describes the monitor's figures.
func (m *monitor) report(limit time.Duration) (orders, chals string, overOrders, overChals []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	lo, loID, oo := longest(m.orders, limit, now)
	lc, lcID, oc := longest(m.chals, limit, now)
	orders = fmt.Sprintf("%d orders seen processing, longest %s (%s)", len(m.orders), lo.Round(time.Millisecond), loID)
	chals = fmt.Sprintf("%d challenges seen processing, longest %s (%s); %d polls, %d failed%s", len(m.chals), lc.Round(time.Millisecond), lcID, m.polls, m.errs, lastErr(m.lastEr))
	return orders, chals, oo, oc
}

func lastErr(s string) string {
	if s == "" {
		return ""
	}
	return " (last: " + strings.TrimSpace(s) + ")"
}

// lastSeen returns when challenge id was last seen in processing.
func (m *monitor) lastSeen(id string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.chals[id]
	if !ok {
		return time.Time{}, false
	}
	return s.last, !s.open
}

// lastSeenOrder returns when order id was last seen in processing.
func (m *monitor) lastSeenOrder(id string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.orders[id]
	if !ok {
		return time.Time{}, false
	}
	return s.last, !s.open
}

// waitQuiet polls until no challenge and no order is processing, or
// until deadline; it returns what is still processing then.
func waitQuiet(ctx context.Context, db *pgxpool.Pool, deadline time.Time) (chals []leasedJob, orders []string, err error) {
	for {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		chals, err = processingChallenges(qctx, db)
		if err == nil {
			orders, err = processingOrders(qctx, db)
		}
		cancel()
		if err == nil && len(chals) == 0 && len(orders) == 0 {
			return nil, nil, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return chals, orders, err
		}
		time.Sleep(250 * time.Millisecond)
	}
}
