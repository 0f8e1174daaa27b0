// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"

	"github.com/weir-pki/weir/ratelimit"
)

// The driver compiles every statement at each execution (its prepared
// statements are only text), and allocates the pages of a statement
// journal or an ephemeral table with mmap and frees them with munmap, so
// the statement shapes here are chosen by measurement:
//
//   - one query loads every bucket of a batch, joining the keys as a VALUES
//     co-routine (key IN (…) would build an ephemeral table);
//   - new rows are inserted by one multi-row INSERT OR IGNORE (a plain
//     multi-row INSERT needs a statement journal; OR IGNORE does not, and
//     ignores nothing here, since the batch loaded every existing row of
//     its keys under the write lock);
//   - changed and deleted rows are single-row UPDATEs and DELETEs.

// maxRowsPerStmt bounds the keys or rows of one statement, keeping its
// parameters far below SQLite's limit; larger batches use several.
const maxRowsPerStmt = 200

// Single-row writes. A GCRA bucket is the row whose member is empty.
const (
	updateTATSQL    = `UPDATE buckets SET ts = ? WHERE key = ? AND member = ''`
	deleteTATSQL    = `DELETE FROM buckets WHERE key = ? AND member = ''`
	updateMemberSQL = `UPDATE buckets SET ts = ?, expires = ? WHERE key = ? AND member = ?`
	deleteMemberSQL = `DELETE FROM buckets WHERE key = ? AND member = ?`
	pruneMembersSQL = `DELETE FROM buckets WHERE key = ? AND expires <= ?`
	insertRowsSQL   = `INSERT OR IGNORE INTO buckets (key, member, ts, expires) VALUES `
)

// pruneAtExpired is the number of expired members of a count bucket at
// which a batch that writes the bucket deletes them itself rather than
// leaving them for Sweep.
const pruneAtExpired = 16

// keyState is one distinct key of a batch: what was loaded for it, and
// what its committed ops require to be written.
type keyState struct {
	skey        string           // storageKey of the key
	rate, count bool             // a rate op, a count op uses the key
	hasTAT      bool             // a GCRA row exists
	orig        ratelimit.Bucket // the stored state, to diff against
	expires     map[string]int64 // the stored expiry of each member of orig
	work        *ratelimit.Bucket
	write       bool  // an op on the key was applied
	window      int64 // the window of the last applied count op, in µs
}

// applyTx runs ops in tx, which holds the write lock: it reads the clock,
// takes the ops' buckets from ov, the bucket cache or the file, evaluates
// and, if the batch is committed, writes back what changed. ov ends up with
// the rows of every bucket of the batch as tx leaves them. The caller
// commits, and publishes ov once it has.
func (s *RateLimitSource) applyTx(ctx context.Context, tx *sql.Tx, ov rowsOverlay, ops []ratelimit.Op) (*ratelimit.BatchResult, error) {
	now := s.clock()
	keys := make(map[string]*keyState, len(ops))
	order := make([]*keyState, 0, len(ops)) // distinct keys in batch order
	for i := range ops {
		k := ops[i].Key
		ks := keys[k]
		if ks == nil {
			ks = &keyState{skey: storageKey(k)}
			keys[k] = ks
			order = append(order, ks)
		}
		if ops[i].Kind.Kind() == ratelimit.KindRate {
			ks.rate = true
		} else {
			ks.count = true
		}
	}
	var missing []*keyState
	for _, ks := range order {
		r, ok := ov[ks.skey]
		if !ok {
			r, ok = s.cache.get(ks.skey)
		}
		if !ok {
			missing = append(missing, ks)
			continue
		}
		ks.setRows(r)
		ov[ks.skey] = r
	}
	for len(missing) > 0 {
		n := min(len(missing), maxRowsPerStmt)
		loaded, err := load(ctx, tx, s.stmts, missing[:n])
		if err != nil {
			return nil, err
		}
		for i, ks := range missing[:n] {
			ov[ks.skey] = loaded[i]
		}
		missing = missing[n:]
	}
	work := make(map[string]*ratelimit.Bucket, len(keys))
	for k, ks := range keys {
		ks.work = ks.orig.Clone()
		work[k] = ks.work
	}

	res := ratelimit.Eval(now, ops, work)
	if !res.Committed {
		return res, nil
	}
	for i := range res.Results {
		if !res.Results[i].Applied {
			continue
		}
		ks := keys[ops[i].Key]
		ks.write = true
		if ops[i].Kind.Kind() == ratelimit.KindCount {
			ks.window = ops[i].Limit.WindowMicros()
		}
	}
	if err := store(ctx, tx, s.stmts, ov, ops, keys, now); err != nil {
		return nil, err
	}
	return res, nil
}

// setRows makes r, a bucket's stored rows, what ks was loaded with. r's
// maps are shared, never changed: Eval works on a clone.
func (ks *keyState) setRows(r *storedRows) {
	ks.hasTAT, ks.orig.TAT = r.hasTAT, r.tat
	ks.orig.Members, ks.expires = r.members, r.expires
	if len(r.members) == 0 {
		ks.orig.Members, ks.expires = nil, nil
	}
}

// load reads, in one query, the stored rows of the buckets of keys, sets
// each key's orig from them (setRows) and returns them in keys' order.
func load(ctx context.Context, tx *sql.Tx, p *rlStmts, keys []*keyState) ([]*storedRows, error) {
	args := make([]any, len(keys))
	loaded := make([]*storedRows, len(keys))
	bySKey := make(map[string]*storedRows, len(keys))
	for i, ks := range keys {
		args[i] = ks.skey
		loaded[i] = &storedRows{}
		bySKey[ks.skey] = loaded[i]
	}
	st, err := p.loadStmt(ctx, tx, len(keys))
	if err != nil {
		return nil, fmt.Errorf("loading: %w", err)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("loading: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k, m    string
			ts      int64
			expires sql.NullInt64
		)
		if err := rows.Scan(&k, &m, &ts, &expires); err != nil {
			return nil, fmt.Errorf("loading: %w", err)
		}
		bySKey[k].add(m, ts, expires.Int64)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("loading: %w", err)
	}
	for i, ks := range keys {
		ks.setRows(loaded[i])
	}
	return loaded, nil
}

// store writes the difference between orig and work of every key with an
// applied op, visiting keys in batch order so the statements are
// deterministic: a rate bucket's TAT is inserted or updated, or its row
// deleted when the bucket is full at now; members that left are deleted and
// new ones inserted with their expiry. A member that left because Eval
// pruned it and whose stored expiry has passed is normally left for Sweep,
// which deletes such rows in bulk far more cheaply; Eval prunes it again on
// every load and Get skips it, so no decision or snapshot ever sees it.
// Each written bucket's rows in ov are replaced by the rows the statements
// leave, worked out beside each statement.
func store(ctx context.Context, tx *sql.Tx, p *rlStmts, ov rowsOverlay, ops []ratelimit.Op, keys map[string]*keyState, now int64) error {
	type rowWrite struct {
		query string
		args  []any
	}
	var (
		newRows []any // rows to insert: key, member, ts, expires
		single  []rowWrite
	)
	write := func(query string, args ...any) { single = append(single, rowWrite{query, args}) }
	for i := range ops {
		ks := keys[ops[i].Key]
		if !ks.write {
			continue
		}
		k := ks.skey
		ks.write = false // visit each key once
		after := ov[k].clone()
		ov[k] = after
		if ks.rate {
			switch tat := ks.work.TAT; {
			case tat <= now:
				if ks.hasTAT {
					write(deleteTATSQL, k)
					after.hasTAT, after.tat = false, 0
				}
			case !ks.hasTAT:
				newRows = append(newRows, k, "", tat, nil)
				after.hasTAT, after.tat = true, tat
			case tat != ks.orig.TAT:
				write(updateTATSQL, tat, k)
				after.tat = tat
			}
		}
		if !ks.count {
			continue
		}
		// Members whose stored expiry has passed are left for Sweep,
		// unless there are many: then one range delete drops them all, so
		// a bucket stays small even if Sweep never runs. stored reports
		// whether a member's row is still there after that.
		expired := 0
		for m := range ks.orig.Members {
			if ks.expires[m] <= now {
				expired++
			}
		}
		pruned := expired >= pruneAtExpired
		if pruned {
			write(pruneMembersSQL, k, now)
			for m, e := range after.expires {
				if e <= now {
					after.deleteMember(m)
				}
			}
		}
		stored := func(m string) bool { return !pruned || ks.expires[m] > now }
		for m := range ks.orig.Members {
			if _, ok := ks.work.Members[m]; !ok && ks.expires[m] > now {
				write(deleteMemberSQL, k, m)
				after.deleteMember(m)
			}
		}
		for m, ts := range ks.work.Members {
			switch old, ok := ks.orig.Members[m]; {
			case !ok || !stored(m):
				newRows = append(newRows, k, m, ts, memberExpiry(ts, ks.window))
				after.setMember(m, ts, memberExpiry(ts, ks.window))
			case old != ts: // re-added after it expired, before Sweep deleted it
				write(updateMemberSQL, ts, memberExpiry(ts, ks.window), k, m)
				after.setMember(m, ts, memberExpiry(ts, ks.window))
			}
		}
	}
	for _, w := range single {
		st, err := p.singleStmt(ctx, tx, w.query)
		if err == nil {
			_, err = st.ExecContext(ctx, w.args...)
		}
		if err != nil {
			return fmt.Errorf("storing: %w", err)
		}
	}
	if err := insertRows(ctx, tx, p, newRows); err != nil {
		return fmt.Errorf("storing: %w", err)
	}
	return nil
}

// insertRows inserts rows, four values each, at most maxRowsPerStmt per
// statement.
func insertRows(ctx context.Context, tx *sql.Tx, p *rlStmts, rows []any) error {
	for len(rows) > 0 {
		n := min(len(rows)/4, maxRowsPerStmt)
		st, err := p.insertStmt(ctx, tx, n)
		if err == nil {
			_, err = st.ExecContext(ctx, rows[:n*4]...)
		}
		if err != nil {
			return err
		}
		rows = rows[n*4:]
	}
	return nil
}

// storageKey returns the primary key under which a bucket key is stored:
// the key with its first colon-separated field (the limit's name, in a key
// built by ratelimit.BucketKey) moved to the end, so "order-creation:acct-42"
// is stored as "acct-42:order-creation". The rows of one account's or one
// client's buckets are then neighbours in the B-trees, and a batch, which is
// mostly about one account, reads and writes a page or two instead of one
// per limit: fewer pages to log at each commit. The mapping is one-to-one: a
// key without a colon is stored as is, and otherwise the last colon of the
// stored key is the one that followed the first field, which has none.
func storageKey(key string) string {
	name, rest, ok := strings.Cut(key, ":")
	if !ok {
		return key
	}
	return rest + ":" + name
}

// memberExpiry is the instant a member timestamped ts stops counting under
// a window: it counts while ts > now − window, that is while now < ts +
// window. The sum saturates, and a ts of 0 never expires (the lazy expiry
// of package ratelimit keeps such a member too).
func memberExpiry(ts, window int64) int64 {
	if ts == 0 || ts > math.MaxInt64-window {
		return math.MaxInt64
	}
	return ts + window
}
