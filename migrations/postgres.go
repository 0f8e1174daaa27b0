// SPDX-License-Identifier: Apache-2.0

package migrations

import (
	"embed"
	"io/fs"
)

//go:embed postgres/*.sql
var postgresFiles embed.FS

// PostgresDir is the directory of Postgres() that holds the PostgreSQL
// migrations: the ACME objects and the shared nonces, with versions of
// their own (numbered apart from the SQLite ones).
const PostgresDir = "postgres"

// Postgres returns the embedded file system whose PostgresDir directory
// holds the PostgreSQL migrations (storage/postgres).
func Postgres() fs.FS { return postgresFiles }
