// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
)

// TestLogAcrossReplicas: three replicas with the verifiable log on issue
// concurrently through the round-robin client; the replica that runs the
// log's sequencer is killed with SIGKILL under the load. Then:
//
//	(a) the sequencer's lease moved to a survivor, which integrated
//	    every pending entry, the dead replica's included;
//	(b) the log holds exactly one issuance entry per certificate in the
//	    store, at leaf indexes 0 … size-1 with no gap and no repeat;
//	(c) the tree recomputed from the entries has the root of the latest
//	    checkpoint, whose signature verifies with the log's verifier key.
func TestLogAcrossReplicas(t *testing.T) {
	_, dsn := requirePostgres(t)
	rs := startRedis(t)
	cl := startCluster(t, clusterOpts{dsn: dsn, redis: rs, transparency: true})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	owners := cl.owners(t, ctx)

	const target = 40
	reached := make(chan struct{})
	var once sync.Once
	loadDone := make(chan *loadResult, 1)
	go func() {
		loadDone <- cl.runLoad(ctx, loadOpts{label: "log", workers: 4, target: target, attempts: 10, perIssue: time.Minute}, func(n int64) {
			if n >= 10 {
				once.Do(func() { close(reached) })
			}
		})
	}()
	select {
	case <-reached:
	case res := <-loadDone:
		t.Fatalf("the load ended before the kill: %d certificates; failures:%s", len(res.certs), res.summary())
	}
	seqOwner := sequencerOwner(t, ctx, cl.db)
	victim := -1
	for i, o := range owners {
		if o == seqOwner {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("the sequencer's lease is held by %q, none of the replicas %v", seqOwner, owners)
	}
	if err := cl.procs[victim].Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed replica %d (the sequencer) after 10 certificates", victim+1)
	res := <-loadDone
	if len(res.fatal) > 0 || len(res.certs) != target {
		t.Fatalf("%d of %d certificates issued; given up: %v", len(res.certs), target, res.fatal)
	}

	// (a) A survivor takes the lease (it ends 400 ms after the last
	// renewal) and integrates everything pending.
	var size int64
	for range 300 { // 300 × 100 ms
		var pending int64
		err := cl.db.QueryRow(ctx, `SELECT (SELECT count(*) FROM log_entries WHERE log_index IS NULL), (SELECT size FROM log_state)`).Scan(&pending, &size)
		if err != nil {
			t.Fatal(err)
		}
		if o := sequencerOwner(t, ctx, cl.db); pending == 0 && o != seqOwner {
			t.Logf("the lease moved to %s; the log's size is %d", o, size)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if o := sequencerOwner(t, ctx, cl.db); o == seqOwner {
		t.Fatalf("the sequencer's lease is still the dead replica's (%s)", o)
	}

	// (b) One entry per certificate, no gap, no repeat.
	var certs, logged, distinct, unintegrated int64
	err := cl.db.QueryRow(ctx, `SELECT (SELECT count(*) FROM certificates),
		(SELECT count(*) FROM log_entries WHERE serial IS NOT NULL),
		(SELECT count(DISTINCT serial) FROM log_entries WHERE serial IS NOT NULL),
		(SELECT count(*) FROM log_entries WHERE log_index IS NULL)`).Scan(&certs, &logged, &distinct, &unintegrated)
	if err != nil {
		t.Fatal(err)
	}
	if certs < target || logged != certs || distinct != certs || unintegrated != 0 {
		t.Fatalf("%d certificates stored, %d issuance entries for %d serials, %d not integrated; want one integrated entry per certificate", certs, logged, distinct, unintegrated)
	}
	var missing int64
	if err := cl.db.QueryRow(ctx, `SELECT count(*) FROM certificates c WHERE NOT EXISTS (SELECT 1 FROM log_entries l WHERE l.serial = c.serial)`).Scan(&missing); err != nil {
		t.Fatal(err)
	}
	if missing != 0 {
		t.Fatalf("%d certificates have no log entry", missing)
	}

	// (c) The tree and the checkpoint.
	entries := logEntries(t, ctx, cl.db, size)
	checkTree(t, ctx, cl.db, cl.dataDirs[0], entries)
}

// sequencerOwner is the owner of the sequencer's lease.
func sequencerOwner(t *testing.T, ctx context.Context, db *pgxpool.Pool) string {
	t.Helper()
	var owner string
	err := db.QueryRow(ctx, `SELECT owner FROM leases WHERE name = 'log-sequencer'`).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return owner
}

// logEntries reads the integrated entries in leaf order and checks that
// their indexes are 0 … size-1.
func logEntries(t *testing.T, ctx context.Context, db *pgxpool.Pool, size int64) [][]byte {
	t.Helper()
	rows, err := db.Query(ctx, `SELECT log_index, entry FROM log_entries WHERE log_index IS NOT NULL ORDER BY log_index`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var i int64
		var e []byte
		if err := rows.Scan(&i, &e); err != nil {
			t.Fatal(err)
		}
		if i != int64(len(out)) {
			t.Fatalf("leaf index %d follows %d: a gap or a repeat", i, len(out)-1)
		}
		if _, err := transparency.ParseEntry(e); err != nil {
			t.Fatalf("entry %d does not parse: %v", i, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if int64(len(out)) != size {
		t.Fatalf("%d integrated entries, the log's size is %d", len(out), size)
	}
	return out
}

// checkTree recomputes the tree of entries and checks it against the
// stored checkpoint of its size, opened with the verifier key in
// dataDir.
func checkTree(t *testing.T, ctx context.Context, db *pgxpool.Pool, dataDir string, entries [][]byte) {
	t.Helper()
	vkey, err := os.ReadFile(filepath.Join(dataDir, "transparency", "log-key.vkey"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(strings.TrimSpace(string(vkey)))
	if err != nil {
		t.Fatal(err)
	}
	var hashes []tlog.Hash
	read := tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(ix))
		for j, x := range ix {
			if x >= int64(len(hashes)) {
				return nil, fmt.Errorf("no stored hash %d", x)
			}
			out[j] = hashes[x]
		}
		return out, nil
	})
	for i, e := range entries {
		hs, err := tlog.StoredHashes(int64(i), e, read)
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, hs...)
	}
	size := int64(len(entries))
	root, err := tlog.TreeHash(size, read)
	if err != nil {
		t.Fatal(err)
	}
	var msg []byte
	if err := db.QueryRow(ctx, `SELECT checkpoint FROM log_checkpoints WHERE size = $1`, size).Scan(&msg); err != nil {
		t.Fatalf("the checkpoint of size %d: %v", size, err)
	}
	c, err := transparency.OpenCheckpoint(msg, v)
	if err != nil {
		t.Fatal(err)
	}
	if c.Size != size || c.Hash != root {
		t.Fatalf("the checkpoint says size %d root %x; the entries make root %x", c.Size, c.Hash, root)
	}
}
