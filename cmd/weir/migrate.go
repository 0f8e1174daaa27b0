package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// cmdMigrate brings the ACME store's schema up to date and prints its
// versions. weir serve migrates at start too (replicas take turns under
// PostgreSQL's advisory lock); weir migrate does it beforehand, e.g. as a
// deployment step before the new replicas start.
func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: weir migrate [-config FILE]\n\n"+
			"Applies the schema migrations of the ACME store (storage.driver: the SQLite\n"+
			"file, or the PostgreSQL schema) that it lacks and prints every version.\n"+
			"weir serve does the same at start; running weir migrate first is safe\n"+
			"while replicas run and while others migrate.\n\n")
		fs.PrintDefaults()
	}
	configPath := fs.String("config", "", "the server's configuration `file` (default: embedded defaults)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "weir migrate: %v\n", err)
		return 1
	}
	if err := migrateStore(ctx, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "weir migrate: %v\n", err)
		return 1
	}
	return 0
}

// migrateStore opens cfg's ACME store, which applies what migrations it
// lacks, and prints its versions, marking those applied just now.
func migrateStore(ctx context.Context, cfg Config, w io.Writer) error {
	where := "PostgreSQL"
	if cfg.Storage.Driver == driverSQLite {
		dd, err := filepath.Abs(cfg.DataDir)
		if err != nil {
			return err
		}
		cfg.DataDir = dd
		if err := os.MkdirAll(dd, 0o700); err != nil {
			return fmt.Errorf("data-dir: %w", err)
		}
		where = filepath.Join(dd, cfg.Storage.Path)
	}
	start := time.Now()
	store, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	vs, err := schemaVersions(ctx, store)
	if err != nil {
		return err
	}
	if len(vs) == 0 {
		return fmt.Errorf("storage: no schema version is recorded")
	}
	fmt.Fprintf(w, "storage %s (%s): schema version %d\n", cfg.Storage.Driver, where, vs[len(vs)-1].Version)
	for _, v := range vs {
		note := ""
		if !v.AppliedAt.Before(start) {
			note = "  (applied now)"
		}
		fmt.Fprintf(w, "  %04d %-20s %s%s\n", v.Version, v.Name, v.AppliedAt.UTC().Format(time.RFC3339), note)
	}
	return nil
}
