// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Migrate brings the schema of cfg's ACME store (the SQLite file, or the
// PostgreSQL schema) up to date, as weir migrate does, and writes its
// versions to w, marking those applied just now. New does the same at
// start; running it first is safe while replicas run and while others
// migrate (PostgreSQL's advisory lock).
func Migrate(ctx context.Context, cfg Config, w io.Writer) error {
	where := "PostgreSQL"
	if cfg.Storage.Driver == DriverSQLite {
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
