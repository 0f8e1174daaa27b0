// SPDX-License-Identifier: Apache-2.0

package migrations

import (
	"embed"
	"io/fs"
)

//go:embed sqlite-ratelimit/*.sql
var sqliteRateLimitFiles embed.FS

// SQLiteRateLimitDir is the directory of SQLiteRateLimit() that holds the
// migrations of the SQLite rate-limit database, a file separate from the
// ACME data with its own schema versions.
const SQLiteRateLimitDir = "sqlite-ratelimit"

// SQLiteRateLimit returns the embedded file system whose SQLiteRateLimitDir
// directory holds the SQLite rate-limit migrations.
func SQLiteRateLimit() fs.FS { return sqliteRateLimitFiles }
