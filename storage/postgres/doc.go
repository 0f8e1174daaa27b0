// SPDX-License-Identifier: Apache-2.0

// Package postgres implements acme.Store, acme.Inventory, acme.EABStore
// and acme.NonceStore on PostgreSQL with pgx v5, so that several weir
// replicas can share one database.
//
// A Store is a pgxpool of connections; it starts no goroutine. A write of
// one statement runs on its own (one round trip); CreateOrder,
// UpdateAuthz, FinalizeOrder and an EAB-bound CreateAccount run in a
// transaction. Every status update is a compare-and-set (UPDATE … WHERE
// status = $from) whose miss is told apart, by a lookup of the row (rows
// are never deleted), as acme.ErrNotFound (no such row) or
// acme.ErrConflict; at PostgreSQL's default isolation, READ COMMITTED, a
// concurrent update of the same row waits for the first to commit and then
// finds the status changed, so of many concurrent finalizations of one
// order exactly one issues. Unique violations
// (including the partial index that lets one order replacing a
// certificate become valid) are acme.ErrConflict, dangling references
// acme.ErrNotFound. Anything else, such as a lost connection, is a plain
// wrapped error, which the ACME service answers as serverInternal; the
// pool replaces broken connections, so the next call works once the
// server is back.
//
// The schema is the numbered SQL files of package migrations (directory
// postgres), applied by Open, each in its own transaction, recorded in the
// schema_migrations table, under a session advisory lock, so replicas
// starting at once apply each migration exactly once. The tables live in
// the first schema of the connection's search_path (set search_path in
// the DSN to keep weir apart from other users of a database). Open refuses
// a schema newer than the binary.
//
// Times are stored as bigint Unix nanoseconds in UTC, as storage/sqlite
// stores them, so they must lie between the years 1678 and 2262; the zero
// time.Time is stored as 0 (or NULL) and read back as the zero time.
// Values are returned in UTC. Empty slices are read back as nil.
//
// Nonces (NewNonces) are rows of an UNLOGGED table keyed by 16 random
// bytes: redeeming one deletes it, so it redeems at most once on any
// replica; their expiry is the server's clock. Nonces.Run sweeps the
// expired ones.
package postgres
