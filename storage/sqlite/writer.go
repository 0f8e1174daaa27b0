// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weir-pki/weir/acme"
)

// Group commit.
//
// Every write of the store is an operation (a writeOp: a function of a
// writeTx) that one goroutine, the writer, started by Open and stopped by
// Close, runs on the single writer connection. The writer takes whatever
// operations are queued and runs them in one BEGIN IMMEDIATE … COMMIT
// transaction, together with those queued while it runs them, up to
// maxWriteGroup in all. When writes are frequent (the last group committed
// less than lingerBusy ago) and fewer than lingerGroup are queued, it
// first waits for more (see lingerPlan): each commit costs an fsync and
// writes the pages it changed, so a few writes more per group save more
// CPU than the wait costs in latency. How long it waits follows the last
// transaction. One of a single operation means a lone client, whose next
// write no other joins: the writer waits only lingerLone. One of several
// means concurrent clients, whose writes arrive a fraction of a
// millisecond apart: it waits up to lingerMax. One of more than
// lingerGroup means a load high enough to fill larger groups: it waits for
// twice as many, twice as long. Waiting ends as soon as the group is
// full. A lone write on an idle store commits at once. Each operation but
// the first runs inside a SAVEPOINT of its own: one that fails (a compare-and-set
// conflict, a constraint) is rolled back to its savepoint and leaves the
// others alone; if the first fails, the transaction holds nothing else and
// is rolled back, and the others go on in a new one. The group commits
// once, so it costs one fsync of the write-ahead log however many
// operations it holds. Each caller gets its
// result only after the COMMIT: success means its writes are on stable
// storage; if the COMMIT fails, every operation of the group fails with
// that error and none wrote anything. An operation's result, error or not,
// is always the one it had in the transaction that committed, seeing the
// committed writes of the operations before it in the group exactly as if
// they had run alone one after the other.
//
// Some errors (a full disk, an I/O error) make SQLite roll back the whole
// transaction, not just the statement. The writer notices (rolling back to
// the savepoint fails), fails that operation with its error and runs the
// rest of the group again in a new transaction.
//
// Operations run with a context of their own that is never canceled: a
// canceled statement inside a shared transaction would make SQLite roll
// the whole of it back. A caller's context is checked just before its
// operation runs; one that is done by then fails the call, writing nothing.

// maxWriteGroup bounds the operations of one transaction, so that one
// group holds the write lock for a few milliseconds at most.
const maxWriteGroup = 64

// Lingering for more writes before a group runs (lingerPlan).
const (
	lingerGroup = 8                      // a group this large runs at once
	lingerLone  = 500 * time.Microsecond // the longest wait after a transaction of one operation
	lingerMax   = 2 * time.Millisecond   // the longest wait after one of several
	lingerBusy  = 5 * time.Millisecond   // only if the last group committed less than this ago
)

// lingerPlan returns how many operations the writer, holding queued ones,
// waits for before running them, and for how long at most; 0 means it
// runs them at once. last is when its last group finished, lastOps how
// many operations that group's last transaction committed.
func lingerPlan(queued, lastOps int, last, now time.Time) (group int, wait time.Duration) {
	if last.IsZero() || now.Sub(last) >= lingerBusy {
		return 0, 0
	}
	switch {
	case lastOps > lingerGroup:
		group, wait = 2*lingerGroup, 2*lingerMax
	case lastOps > 1:
		group, wait = lingerGroup, lingerMax
	default:
		group, wait = lingerGroup, lingerLone
	}
	if queued >= group {
		return 0, 0
	}
	return group, wait
}

// writeQueueLen is the capacity of the writer's queue; callers beyond it
// wait to enqueue.
const writeQueueLen = 4 * maxWriteGroup

// errStoreClosed is the error of a write after Close.
var errStoreClosed = errors.New("sqlite: store is closed")

// writeOp is one write waiting for, or taking part in, a group.
type writeOp struct {
	ctx context.Context // the caller's, checked before fn runs
	fn  func(w *writeTx) error
	// err is fn's error, or nil; panic is what fn panicked with. The
	// writer sets them and then signals done.
	err   error
	panic any
	done  chan struct{} // receives one value per use when err is final
	// edits are the changes of the object cache (cache.go) that fn
	// recorded in its last run, applied if the transaction commits.
	edits []cacheEdit
}

// writeOps recycles writeOps with their done channels.
var writeOps = sync.Pool{New: func() any { return &writeOp{done: make(chan struct{}, 1)} }}

// write runs fn in a write transaction (see Group commit) and returns its
// error, or the COMMIT's. A panic in fn is raised again in the caller.
func (s *Store) write(ctx context.Context, fn func(w *writeTx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	op := writeOps.Get().(*writeOp)
	op.ctx, op.fn = ctx, fn

	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		writeOps.Put(op.reset())
		return errStoreClosed
	}
	select {
	case s.ops <- op:
	case <-ctx.Done():
		s.closeMu.RUnlock()
		writeOps.Put(op.reset())
		return fmt.Errorf("sqlite: %w", ctx.Err())
	}
	s.closeMu.RUnlock()

	<-op.done
	err, p := op.err, op.panic
	writeOps.Put(op.reset())
	if p != nil {
		panic(p)
	}
	return s.faults.note(err, acme.ErrUnavailable)
}

// reset clears op for reuse and returns it.
func (op *writeOp) reset() *writeOp {
	op.ctx, op.fn, op.err, op.panic = nil, nil, nil, nil
	clear(op.edits)
	op.edits = op.edits[:0]
	return op
}

// runWriter is the writer goroutine: it runs the queued operations in
// groups until Close closes the queue, then signals s.writerDone.
func (s *Store) runWriter() {
	defer close(s.writerDone)
	w := &writeTx{s: s}
	group := make([]*writeOp, 0, maxWriteGroup)
	timer := time.NewTimer(lingerMax)
	timer.Stop()
	var last time.Time // when the last group finished
	for op := range s.ops {
		group = w.takeQueued(append(group[:0], op))
		if n, wait := lingerPlan(len(group), w.committed, last, time.Now()); n > 0 {
			group = w.linger(group, timer, n, wait)
		}
		w.runGroup(group)
		last = time.Now()
		clear(group[:cap(group)]) // runTx may have appended to it
	}
}

// linger adds to group the operations that arrive within wait, until it
// holds n or the queue is closed, and returns it. timer is stopped and is
// left stopped.
func (w *writeTx) linger(group []*writeOp, timer *time.Timer, n int, wait time.Duration) []*writeOp {
	timer.Reset(wait)
	defer timer.Stop()
	for len(group) < n {
		select {
		case op, ok := <-w.s.ops:
			if !ok {
				return group
			}
			group = append(group, op)
		case <-timer.C:
			return group
		}
	}
	return group
}

// writeTx is the writer's transaction, in which operations run.
type writeTx struct {
	s  *Store
	tx *sql.Tx
	// stmts holds the statements of s.ws bound to tx, made on first use.
	stmts [numWriteStmts]*sql.Stmt
	// ran are the operations run in tx, in order, whose results are
	// reported when it ends: failed if their err or panic is set.
	ran []*writeOp
	// cur is the operation running, whose edits edit records.
	cur *writeOp
	// committed is how many operations the last transaction committed.
	committed int
}

// edit records e, a change of the object cache that the running
// operation's writes make, to be applied if they commit.
func (w *writeTx) edit(e cacheEdit) { w.cur.edits = append(w.cur.edits, e) }

// writeCtx is the context of the writer's statements: never canceled.
var writeCtx = context.Background()

// stmt returns the statement id bound to the transaction.
func (w *writeTx) stmt(id writeStmt) *sql.Stmt {
	st := w.stmts[id]
	if st == nil {
		st = w.tx.StmtContext(writeCtx, w.s.ws[id])
		w.stmts[id] = st
	}
	return st
}

// exec runs the statement id with args.
func (w *writeTx) exec(id writeStmt, args ...any) (sql.Result, error) {
	return w.stmt(id).ExecContext(writeCtx, args...)
}

// queryRow runs the statement id with args and returns its row.
func (w *writeTx) queryRow(id writeStmt, args ...any) *sql.Row {
	return w.stmt(id).QueryRowContext(writeCtx, args...)
}

// runGroup runs group, and the operations queued meanwhile, in as few
// transactions as it takes (one, unless an operation fails alone in one or
// a transaction is lost), and reports every operation's result.
func (w *writeTx) runGroup(group []*writeOp) {
	for len(group) > 0 {
		group = w.runTx(group)
	}
}

// runTx runs operations in one transaction and reports their results:
// those of ops, then, until maxWriteGroup have run, those queued by the
// time the last one finished, so that the operations that arrive while
// the transaction runs share its COMMIT rather than waiting for the next.
//
// The first operation runs without a savepoint, which it does not need:
// if it fails, the transaction has nothing else to keep, and is rolled
// back. Each later one runs inside a savepoint. If SQLite rolls the
// transaction back by itself, runTx reports the failure of the operation
// that caused it. In either case it returns the operations still to run,
// in order, for a new transaction.
//
// An operation is reported (finished) exactly once, after which its
// caller may reuse it: ops may then hold it again, requeued, so runTx
// never looks at the entries of ops it has passed.
func (w *writeTx) runTx(ops []*writeOp) (again []*writeOp) {
	w.ran = w.ran[:0]
	defer func() { clear(w.ran[:cap(w.ran)]) }()

	tx, err := w.s.w.BeginTx(writeCtx, nil) // BEGIN IMMEDIATE
	if err != nil {
		err = fmt.Errorf("sqlite: begin: %w", err)
		for _, op := range ops {
			op.finish(err)
		}
		return nil
	}
	w.tx = tx
	defer func() {
		w.tx = nil
		clear(w.stmts[:]) // closed with the transaction
	}()

	ok := 0 // operations of w.ran that succeeded
	for i := 0; ; i++ {
		if i == len(ops) {
			if ops = w.takeQueued(ops); i == len(ops) {
				break
			}
		}
		op := ops[i]
		if err := op.ctx.Err(); err != nil {
			// Not run at all: the caller has given up.
			op.finish(fmt.Errorf("sqlite: %w", err))
			continue
		}
		if len(w.ran) == 0 {
			if !w.run(op) {
				w.rollback()
				op.finish(op.err)
				return ops[i+1:]
			}
			w.ran = append(w.ran, op)
			ok++
			continue
		}
		lost, err := w.runSavepoint(op)
		if lost {
			// The transaction is gone, and with it the writes of the
			// operations before op, which run again; op's own error
			// caused it.
			w.rollback()
			op.finish(err)
			again = make([]*writeOp, 0, len(w.ran)+len(ops)-i-1)
			again = append(again, w.ran...)
			return append(again, ops[i+1:]...)
		}
		w.ran = append(w.ran, op)
		if op.err == nil && op.panic == nil {
			ok++
		}
	}

	if ok == 0 {
		w.rollback()
		for _, op := range w.ran {
			op.finish(op.err)
		}
		return nil
	}
	start := time.Now()
	if err := tx.Commit(); err != nil {
		w.s.cache.reset()
		err = fmt.Errorf("sqlite: commit: %w", err)
		for _, op := range w.ran {
			op.finish(err)
		}
		return nil
	}
	took := time.Since(start)
	w.s.commits.Add(1)
	w.committed = len(w.ran)
	// Before any caller hears of the commit, the cache shows it and the
	// observer has counted it, so that a caller that then reads the
	// metrics finds its commit there.
	w.s.cache.apply(w.ran)
	if o := w.s.commitObs.Load(); o != nil {
		(*o).StoreCommit(ok, took)
	}
	for _, op := range w.ran {
		op.finish(op.err)
	}
	return nil
}

// takeQueued appends to ops the operations queued now, without waiting,
// until ops holds maxWriteGroup.
func (w *writeTx) takeQueued(ops []*writeOp) []*writeOp {
	for len(ops) < maxWriteGroup {
		select {
		case op, ok := <-w.s.ops:
			if !ok {
				return ops
			}
			ops = append(ops, op)
		default:
			return ops
		}
	}
	return ops
}

// runSavepoint runs op inside a savepoint of the transaction, rolled back
// if op fails. lost reports that the transaction itself was rolled back
// (or cannot be trusted any more), err why.
func (w *writeTx) runSavepoint(op *writeOp) (lost bool, err error) {
	if _, err := w.exec(wSavepoint); err != nil {
		return true, fmt.Errorf("sqlite: savepoint: %w", err)
	}
	if w.run(op) {
		if _, err := w.exec(wRelease); err != nil {
			return true, fmt.Errorf("sqlite: release savepoint: %w", err)
		}
		return false, nil
	}
	// ROLLBACK TO fails if SQLite rolled the transaction back, since that
	// drops every savepoint.
	if _, err := w.exec(wRollbackTo); err != nil {
		return true, op.failure(err)
	}
	if _, err := w.exec(wRelease); err != nil {
		return true, op.failure(err)
	}
	return false, nil
}

// failure returns the error of op, whose savepoint could not be rolled
// back or released with err.
func (op *writeOp) failure(err error) error {
	return errors.Join(op.err, fmt.Errorf("sqlite: rolling back to savepoint: %w", err))
}

// run runs op.fn and reports whether it succeeded; if not, op.err or
// op.panic says why.
func (w *writeTx) run(op *writeOp) (ok bool) {
	op.err, op.panic = nil, nil
	clear(op.edits)
	op.edits = op.edits[:0]
	w.cur = op
	defer func() {
		w.cur = nil
		if p := recover(); p != nil {
			op.panic = p
			ok = false
		}
	}()
	op.err = op.fn(w)
	return op.err == nil
}

// rollback rolls the transaction back. Its error is ignored: ROLLBACK fails
// when SQLite has rolled the transaction back by itself, which is fine, and
// the operations of the transaction have their own errors to report.
func (w *writeTx) rollback() { _ = w.tx.Rollback() }

// finish reports err (unless op panicked) as the result of op.
func (op *writeOp) finish(err error) {
	if op.panic == nil {
		op.err = err
	}
	op.done <- struct{}{}
}
