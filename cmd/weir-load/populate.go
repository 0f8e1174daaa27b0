// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/storage/postgres"
	"github.com/weir-pki/weir/storage/postgres/pgschema"
	"github.com/weir-pki/weir/storage/sqlite"
	"github.com/weir-pki/weir/storage/transfer"
)

// populateChunk is the number of certificates per batch: each table's
// rows of a batch are one transaction of the store.
const populateChunk = 2000

// populateSink is a store being filled: the import of weir
// migrate-storage, for either driver.
type populateSink interface {
	transfer.Sink
	Finish(ctx context.Context, want transfer.Summary) (transfer.Counts, error)
}

// populate fills a new store with o.populate certificates signed by the
// CA of the data directory o.dataDir (made first, as weir init makes it,
// if it has none): SQLite's weir.db in it, or with -storage postgres the
// schema -postgres-schema on -postgres-dsn (created if missing). The
// store must hold no ACME state yet. With -log it fills the verifiable log
// too (populate_log.go): certificate i's issuance entry at leaf i, the
// tree's stored hashes and the checkpoint of size N, signed with the data
// directory's log key.
func populate(ctx context.Context, o *options, stderr io.Writer) error {
	if o.dataDir == "" {
		return errors.New("-populate needs -data")
	}
	began := time.Now()
	issuer, err := dataDirCA(o.dataDir, stderr)
	if err != nil {
		return err
	}
	var sink populateSink
	switch o.storage {
	case "postgres":
		store, im, err := openPostgresImport(ctx, o)
		if err != nil {
			return err
		}
		defer store.Close()
		defer im.Close()
		logf(stderr, "populating %s", im.Target())
		sink = im
	default:
		im, err := sqlite.OpenImport(ctx, filepath.Join(o.dataDir, "weir.db"), nil)
		if err != nil {
			return err
		}
		defer im.Close()
		logf(stderr, "populating %s", im.Path())
		sink = im
	}
	g := &popGen{
		issuer: issuer, n: o.populate, accounts: (o.populate + certsPerAccount - 1) / certsPerAccount,
		span: o.populateSpan, lifetime: o.populateLifetime, shards: o.populateShards, log: o.log,
	}
	var plog *popLog
	if o.log {
		if plog, err = openPopLog(o.dataDir, o.populate); err != nil {
			return err
		}
	}
	g.start = time.Now().Add(-g.span)
	for range 16 {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		g.leafKeys = append(g.leafKeys, k)
	}
	for from := 0; from < g.accounts; from += populateChunk {
		rows := make([]transfer.Account, 0, populateChunk)
		for id := from + 1; id <= min(from+populateChunk, g.accounts); id++ {
			a, err := g.accountRow(int64(id))
			if err != nil {
				return err
			}
			rows = append(rows, a)
		}
		if err := sink.Accounts(ctx, rows); err != nil {
			return err
		}
	}
	logf(stderr, "%d accounts", g.accounts)
	if err := writeCerts(ctx, g, sink, plog, stderr); err != nil {
		return err
	}
	want := transfer.Summary{AccountSeq: int64(g.accounts), OrderSeq: int64(g.n)}
	if plog != nil {
		if err := plog.checkpoint(ctx, sink); err != nil {
			return err
		}
		want.LogSize = plog.tree.Size()
		logf(stderr, "the verifiable log: %d entries, origin %s", plog.tree.Size(), plog.origin)
	}
	got, err := sink.Finish(ctx, want)
	if err != nil {
		return err
	}
	logf(stderr, "done in %s: %d accounts, %d orders, %d authorizations, %d challenges, %d certificates",
		time.Since(began).Round(time.Second), got[transfer.Accounts], got[transfer.Orders], got[transfer.Authzs],
		got[transfer.Challenges], got[transfer.Certificates])
	return nil
}

// writeCerts signs the certificates in chunks, each on every core, while
// the previous chunk is written, with the chunk's log entries and the
// stored hashes they add when plog is not nil.
func writeCerts(ctx context.Context, g *popGen, sink populateSink, plog *popLog, stderr io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type made struct {
		c   *popChunk
		err error
	}
	chunks := make(chan made, 2)
	go func() {
		defer close(chunks)
		workers := runtime.GOMAXPROCS(0)
		for from := 0; from < g.n && ctx.Err() == nil; from += populateChunk {
			to := min(from+populateChunk, g.n)
			parts := make([]popChunk, workers)
			errs := make([]error, workers)
			var wg sync.WaitGroup
			step := (to - from + workers - 1) / workers
			for w := range workers {
				lo, hi := from+w*step, min(from+(w+1)*step, to)
				if lo >= hi {
					continue
				}
				wg.Go(func() { errs[w] = g.certRows(&parts[w], lo, hi) })
			}
			wg.Wait()
			c := &popChunk{}
			for _, p := range parts {
				c.authzs = append(c.authzs, p.authzs...)
				c.challenges = append(c.challenges, p.challenges...)
				c.orders = append(c.orders, p.orders...)
				c.certs = append(c.certs, p.certs...)
				c.entries = append(c.entries, p.entries...)
			}
			select {
			case chunks <- made{c, errors.Join(errs...)}:
			case <-ctx.Done():
				return
			}
		}
	}()
	done, last := 0, time.Now()
	for m := range chunks {
		if m.err != nil {
			return m.err
		}
		c := m.c
		for _, step := range []func() error{
			func() error { return sink.Authzs(ctx, c.authzs) },
			func() error { return sink.Challenges(ctx, c.challenges) },
			func() error { return sink.Orders(ctx, c.orders) },
			func() error { return sink.Certificates(ctx, c.certs) },
			func() error {
				if plog == nil {
					return nil
				}
				return plog.write(ctx, sink, c.entries)
			},
		} {
			if err := step(); err != nil {
				return err
			}
		}
		done += len(c.certs)
		if time.Since(last) > 10*time.Second || done == g.n {
			logf(stderr, "%d of %d certificates", done, g.n)
			last = time.Now()
		}
	}
	if done != g.n {
		return fmt.Errorf("populate: %d of %d certificates written: %w", done, g.n, context.Cause(ctx))
	}
	return nil
}

// dataDirCA is the CA of the data directory dir, whose files weir init
// makes first when it has none.
func dataDirCA(dir string, stderr io.Writer) (*ca.CA, error) {
	cfg := server.DefaultConfig()
	cfg.DataDir = dir
	if _, err := os.Stat(filepath.Join(dir, "ca", "intermediate.pem")); errors.Is(err, os.ErrNotExist) {
		if _, err := server.InitDataDir(cfg, time.Now(), server.InitOptions{}); err != nil {
			return nil, err
		}
		logf(stderr, "made the CA of %s", dir)
	}
	certPEM, err := os.ReadFile(filepath.Join(dir, "ca", "intermediate.pem"))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, "ca", "intermediate-key.pem"))
	if err != nil {
		return nil, err
	}
	certs, err := ca.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, err
	}
	key, err := ca.ParseKeyPEM(keyPEM)
	if err != nil {
		return nil, err
	}
	// Its certificates are rows for the store to hold, never served: the
	// intermediate's form is checked, not its use (ca.Use).
	h, err := ca.LoadHierarchy(nil, certs[0], key, ca.Use{})
	if err != nil {
		return nil, err
	}
	// The URLs do not matter to what is measured: the certificates are
	// never served to a relying party.
	return ca.New(ca.Config{Lifetime: 90 * 24 * time.Hour}, h, nil)
}

// openPostgresImport opens the store in the schema -postgres-schema
// (creating the schema) and begins an import into it.
func openPostgresImport(ctx context.Context, o *options) (*postgres.Store, *postgres.Import, error) {
	if o.postgresSchema == "" {
		return nil, nil, errors.New("-populate with -storage postgres needs -postgres-schema")
	}
	dsn, err := pgschema.Ensure(ctx, o.postgresDSN, o.postgresSchema)
	if err != nil {
		return nil, nil, err
	}
	store, err := postgres.Open(ctx, postgres.Config{DSN: dsn}, nil)
	if err != nil {
		return nil, nil, err
	}
	im, err := store.BeginImport(ctx, false)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return store, im, nil
}
