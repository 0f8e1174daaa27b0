// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/weir-pki/weir/server"
)

// cmdMigrateStorage copies the ACME state of a stopped weir from its
// SQLite file to PostgreSQL (server.MigrateStorage).
func cmdMigrateStorage(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("migrate-storage", "migrate-storage [-config FILE] --from sqlite --to postgres\n"+
		"                           [--to-dsn DSN | --to-dsn-file FILE] [-force] [-batch N]",
		"Copies the ACME state (accounts, EAB keys, orders, authorizations, challenges,\n"+
			"certificates and revocations) from the SQLite file of -config (data-dir and\n"+
			"storage.path) to a PostgreSQL schema, keeping every ID, and checks the row\n"+
			"count of every table. Stop weir first: the SQLite file is locked for the\n"+
			"copy, and the command refuses while a weir has it open. The target is\n"+
			"--to-dsn or --to-dsn-file, or else the config's storage block if it already\n"+
			"says driver postgres; its schema must hold no ACME state (-force empties it).\n"+
			"The CA files, admin token and limiter stay in the data directory.", stderr)
	var o server.StorageMigration
	fs.StringVar(&o.ConfigFile, "config", "", "the configuration `file` of the weir being moved (default: embedded defaults)")
	fs.StringVar(&o.From, "from", server.DriverSQLite, "the `driver` to copy from: sqlite")
	fs.StringVar(&o.To, "to", server.DriverPostgres, "the `driver` to copy to: postgres")
	fs.StringVar(&o.DSN, "to-dsn", "", "the target PostgreSQL `DSN` (its search_path picks the schema)")
	fs.StringVar(&o.DSNFile, "to-dsn-file", "", "a `file` holding the target DSN")
	fs.BoolVar(&o.Force, "force", false, "empty the target's ACME tables first (their rows are lost): to run a failed copy again")
	fs.IntVar(&o.Batch, "batch", server.DefaultMigrationBatch, "rows per transaction of the target")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := server.MigrateStorage(ctx, o, stdout); err != nil {
		fmt.Fprintf(stderr, "weir migrate-storage: %v\n", err)
		return 1
	}
	return 0
}
