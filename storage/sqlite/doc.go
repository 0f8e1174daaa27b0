// SPDX-License-Identifier: Apache-2.0

// Package sqlite implements acme.Store on a single SQLite database file,
// using the pure-Go modernc.org/sqlite driver.
//
// The database runs in WAL mode. All writes go through one connection (a
// *sql.DB limited to a single connection whose transactions begin with
// BEGIN IMMEDIATE), so writers never race one another for the lock inside
// the process and every compare-and-set reads and writes in the same
// transaction. Reads use a separate pool of query-only connections, which
// WAL lets proceed concurrently with the writer. The writer runs with
// synchronous=FULL, so a committed transaction — in particular an issued
// certificate — is on stable storage before the call that wrote it returns.
//
// Writes are group-committed: a goroutine that Open starts and Close stops
// (Close waits for it, after the writes already queued) runs every write,
// taking whatever writes are queued, up to 64, into one transaction — each
// inside a SAVEPOINT of its own, so that one write's failure, such as a
// compare-and-set conflict, rolls back that write alone — and commits them
// with one fsync. Every caller gets its result only after that COMMIT; if
// it fails, every write of the group fails. A lone write on an idle store
// commits at once; when writes are frequent and few are queued, the writer
// waits up to half a millisecond for more before it begins (writer.go).
//
// Orders and authorizations (with their challenges) are also kept in an
// in-memory object cache that the writer updates as its transactions
// commit (cache.go), because under load WAL's readers refetch every page
// after each commit. Open therefore takes an exclusive lock (the file
// DB.lock, flock(2)) held until Close: one process at a time opens a
// database with Open.
//
// Every statement is prepared once, at Open. A read checks its context
// before it starts but is not interrupted once running (each is a single
// indexed lookup), and GetAuthz and FindValidAuthz read an authorization
// and its challenges in one query. Writes do not watch their caller's
// context once in a transaction shared with others' writes.
//
// The schema is the numbered SQL files of package migrations, applied in
// order at Open and recorded in the schema_migrations table. Open refuses a
// database whose schema is newer than the binary.
//
// Times are stored as Unix nanoseconds in UTC, so they must lie between the
// years 1678 and 2262; the zero time.Time is stored as 0 (or NULL) and read
// back as the zero time. Values are returned in UTC. Empty slices are read
// back as nil.
package sqlite
