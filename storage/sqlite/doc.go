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
// The schema is the numbered SQL files of package migrations, applied in
// order at Open and recorded in the schema_migrations table. Open refuses a
// database whose schema is newer than the binary.
//
// Times are stored as Unix nanoseconds in UTC, so they must lie between the
// years 1678 and 2262; the zero time.Time is stored as 0 (or NULL) and read
// back as the zero time. Values are returned in UTC. Empty slices are read
// back as nil.
package sqlite
