// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/weir-pki/weir/storage/postgres"
	"github.com/weir-pki/weir/storage/sqlite"
	"github.com/weir-pki/weir/storage/transfer"
)

// StorageMigration says what MigrateStorage moves where: the flags of
// weir migrate-storage.
type StorageMigration struct {
	// ConfigFile is the configuration of the weir being moved; "" means
	// the embedded defaults.
	ConfigFile string
	// From and To are the drivers: only DriverSQLite to DriverPostgres.
	From, To string
	// DSN or DSNFile names the target; with neither, the configuration's
	// storage block is the target when it says driver postgres.
	DSN, DSNFile string
	// Force empties the target's ACME tables first.
	Force bool
	// Batch is the rows per transaction of the target
	// (DefaultMigrationBatch).
	Batch int
}

// DefaultMigrationBatch is the rows per transaction of a storage
// migration unless StorageMigration.Batch says otherwise.
const DefaultMigrationBatch = sqlite.DefaultExportBatch

// MigrateStorage copies the ACME state of a stopped weir from its SQLite
// file to PostgreSQL, as weir migrate-storage does: accounts (with their
// IDs, so clients' account URLs stay valid), EAB keys, orders,
// authorizations, challenges and certificates with their revocations and
// ARI windows, and checks the row count of every table. It writes its
// progress and the operator's next steps to w. The CA files, the admin
// token, the HTTPS certificate and the limiter's database stay in the
// data directory; nonces are not copied (clients retry badNonce).
func MigrateStorage(ctx context.Context, o StorageMigration, w io.Writer) error {
	if o.From != DriverSQLite || o.To != DriverPostgres {
		return fmt.Errorf("--from %q --to %q: only --from sqlite --to postgres is supported", o.From, o.To)
	}
	if o.Batch <= 0 {
		return fmt.Errorf("-batch %d: must be positive", o.Batch)
	}
	cfg, err := LoadConfig(o.ConfigFile)
	if err != nil {
		return err
	}
	target, err := migrateTarget(cfg, o)
	if err != nil {
		return err
	}
	pc, err := target.postgresConfig()
	if err != nil {
		return fmt.Errorf("the target: %w", err)
	}
	dd, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return err
	}
	src := filepath.Join(dd, cfg.Storage.Path)

	// The source first: a running weir is refused before the target is
	// touched.
	exp, err := sqlite.OpenExporter(ctx, src, nil)
	if errors.Is(err, sqlite.ErrInUse) {
		return fmt.Errorf("%s is in use: stop weir (every process using data-dir %s) and run this again", src, dd)
	}
	if err != nil {
		return fmt.Errorf("the source (data-dir and storage.path of the config): %w", err)
	}
	defer exp.Close()

	dst, err := postgres.Open(ctx, pc, nil)
	if err != nil {
		return fmt.Errorf("the target: %w", err)
	}
	defer dst.Close()
	im, err := dst.BeginImport(ctx, o.Force)
	var ne *postgres.NotEmptyError
	if errors.As(err, &ne) {
		return fmt.Errorf("%w; point --to-dsn at an empty schema (search_path), or add -force to empty it first", err)
	}
	if err != nil {
		return fmt.Errorf("the target: %w", err)
	}
	defer im.Close()
	fmt.Fprintf(w, "copying %s (SQLite) to %s\n", src, im.Target())
	if emptied := im.Emptied(); len(emptied) > 0 {
		fmt.Fprintf(w, "-force: emptied the target's tables first (%s)\n", countsLine(emptied))
	}

	sum, err := exp.Export(ctx, im, o.Batch)
	if err != nil {
		return fmt.Errorf("%w\nthe target may hold part of the copy: run this again with -force to empty it first", err)
	}
	got, err := im.Finish(ctx, sum)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-14s %10s\n", "table", "rows")
	for _, t := range transfer.Tables() {
		fmt.Fprintf(w, "  %-14s %10d\n", t, got[t])
	}
	fmt.Fprintf(w, "verified: every table in PostgreSQL holds as many rows as in SQLite\n")
	fmt.Fprintf(w, "new accounts will be numbered from %d, new orders after sequence number %d\n\n", sum.AccountSeq+1, sum.OrderSeq)
	printNextSteps(w, o, target, dd)
	return nil
}

// migrateTarget returns the storage block weir should run with after the
// move: the target of the flags, or the config's own when it says
// postgres already.
func migrateTarget(cfg Config, o StorageMigration) (StorageConfig, error) {
	target := StorageConfig{Driver: DriverPostgres, DSN: o.DSN, DSNFile: o.DSNFile, MaxConns: cfg.Storage.MaxConns}
	switch {
	case o.DSN != "" && o.DSNFile != "":
		return target, errors.New("give --to-dsn or --to-dsn-file, not both")
	case o.DSN != "" || o.DSNFile != "":
		return target, nil
	case cfg.Storage.Driver == DriverPostgres:
		return cfg.Storage, nil
	}
	return target, errors.New("no target: give --to-dsn or --to-dsn-file (or a config whose storage.driver is postgres)")
}

// countsLine formats counts as "accounts 2, orders 5".
func countsLine(c transfer.Counts) string {
	var parts []string
	for _, t := range transfer.Tables() {
		if c[t] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", t, c[t]))
		}
	}
	if len(parts) == 0 {
		return "no rows"
	}
	return strings.Join(parts, ", ")
}

// printNextSteps tells the operator what to change in the config.
func printNextSteps(w io.Writer, o StorageMigration, target StorageConfig, dataDir string) {
	where := "the config"
	if o.ConfigFile != "" {
		where = o.ConfigFile
	}
	fmt.Fprintf(w, "Next:\n  1. In %s, set\n       storage:\n         driver: postgres\n", where)
	if target.DSNFile != "" {
		fmt.Fprintf(w, "         dsn-file: %s\n", target.DSNFile)
	} else {
		fmt.Fprintf(w, "         dsn: %q\n"+
			"     (or dsn-file: a file holding the DSN, to keep its password out of the YAML)\n", target.redacted().DSN)
	}
	fmt.Fprintf(w, "     storage.path is then unused.\n"+
		"  2. Keep data-dir %s as it is: the CA files, the HTTPS certificate, the admin\n"+
		"     token and the limiter's database stay there; every replica needs the same CA files.\n"+
		"  3. Start weir. For several replicas, move the limiter to Redis (rate-limiting.backend:\n"+
		"     redis); nonces are then shared there, or in PostgreSQL.\n"+
		"The SQLite file is left as it is, a fallback: weir no longer writes to it.\n", dataDir)
}
