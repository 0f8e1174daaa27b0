// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/weir-pki/weir/storage/sqlrow"
	"github.com/weir-pki/weir/storage/transfer"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrInUse is returned by OpenExporter when another connection, such as a
// running weir, has the database open.
var ErrInUse = errors.New("the database is in use by another process")

// exportLockWaitMillis is how long OpenExporter waits for other
// connections to let go of the database before it gives up: long enough
// for a passing reader (a backup's snapshot), far shorter than the life of
// a server, which holds it from start to stop.
const exportLockWaitMillis = 2000

// DefaultExportBatch is the number of rows per Sink call when Export is
// given none.
const DefaultExportBatch = 1000

// Exporter reads every row of ACME state of a database file for weir
// migrate-storage, while it holds the file exclusively: no other process
// can open the database until Close, and OpenExporter fails with ErrInUse
// while another one has it open. Use it with weir stopped.
type Exporter struct {
	path string
	db   *sql.DB // one connection, holding the exclusive lock
}

// OpenExporter opens the existing database at path for export, taking an
// exclusive lock on it, and brings its schema up to date (as Open does,
// with now recording when; nil means time.Now), so that it has every
// column Export reads. It fails with an error wrapping ErrInUse if another
// connection has the database open: in WAL mode, which weir's databases
// are in, every open connection holds a shared lock on the file for as
// long as it is open, so a running weir, even an idle one, is seen.
func OpenExporter(ctx context.Context, path string, now func() time.Time) (*Exporter, error) {
	if now == nil {
		now = time.Now
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: resolving %s: %w", path, err)
	}
	// Never create the file: a typo in the path must not export an empty
	// database.
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("sqlite: export: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("sqlite: export: %s is not a regular file", abs)
	}
	pragmas := []string{
		fmt.Sprintf("busy_timeout(%d)", exportLockWaitMillis),
		// Set before the database is first read: the connection then takes
		// an exclusive lock on the file at its first access and keeps it
		// until it closes, and uses no shared memory.
		"locking_mode(EXCLUSIVE)",
		"foreign_keys(1)",
	}
	db, err := sql.Open(driverName, dsn(abs, pragmas, nil))
	if err != nil {
		return nil, fmt.Errorf("sqlite: opening %s: %w", abs, err)
	}
	// One connection, never closed while the Exporter lives: it holds the
	// lock.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	e := &Exporter{path: abs, db: db}
	// BEGIN EXCLUSIVE takes the exclusive lock whatever the journal mode;
	// in locking mode EXCLUSIVE, COMMIT keeps it.
	if _, err := db.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		db.Close()
		if isBusy(err) {
			return nil, fmt.Errorf("sqlite: %s: %w (is weir running? stop it first)", abs, ErrInUse)
		}
		return nil, fmt.Errorf("sqlite: %s: taking an exclusive lock: %w", abs, err)
	}
	if _, err := db.ExecContext(ctx, "COMMIT"); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: %s: taking an exclusive lock: %w", abs, err)
	}
	if err := migrate(ctx, db, abs, now); err != nil {
		db.Close()
		return nil, err
	}
	return e, nil
}

// isBusy reports whether err is SQLITE_BUSY or SQLITE_LOCKED (in any of
// their extended forms): another connection holds a lock.
func isBusy(err error) bool {
	var se *msqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// Path returns the absolute path of the database file.
func (e *Exporter) Path() string { return e.path }

// Close releases the database, and with it the lock.
func (e *Exporter) Close() error {
	if err := e.db.Close(); err != nil {
		return fmt.Errorf("sqlite: closing %s: %w", e.path, err)
	}
	return nil
}

// The columns Export reads of each table, in the order of the fields of
// its transfer record: every column (TestExportCoversSchema checks).
const (
	exportAdminCredCols = "name, role, sha256, created_at, created_by, name_lower"
	exportTenantCols    = "name, policy, created_at, updated_at"
	exportAccountCols   = "id, key_thumbprint, jwk, contact, status, created_at, created_ip, eab_key_id"
	exportEABKeyCols    = "id, label, hmac_key, created_at, bound_account, bound_at, revoked_at, tenant"
	exportAuthzCols     = "id, account_id, ident_type, ident_value, wildcard, status, expires, created_at"
	exportChallengeCols = "id, authz_id, position, type, token, status, validated, error, updated_at"
	exportOrderCols     = "seq, id, account_id, status, identifiers, authz_ids, not_before, not_after, expires, " +
		"error, cert_serial, created_at, replaces, profile, csr"
	exportCertCols = "serial, account_id, order_id, der, chain_pem, issuer_chain, names, name_set, not_before, " +
		"not_after, issued_at, revoked_at, reason, profile, renewal_start, renewal_end, renew_now, issuer, crl_shard, validations"
)

// exportColumns returns the columns Export reads of table t.
func exportColumns(t transfer.Table) string {
	switch t {
	case transfer.AdminCreds:
		return exportAdminCredCols
	case transfer.Tenants:
		return exportTenantCols
	case transfer.Accounts:
		return exportAccountCols
	case transfer.EABKeys:
		return exportEABKeyCols
	case transfer.Authzs:
		return exportAuthzCols
	case transfer.Challenges:
		return exportChallengeCols
	case transfer.Orders:
		return exportOrderCols
	case transfer.Certificates:
		return exportCertCols
	case transfer.LogEntries:
		return exportLogEntryCols
	case transfer.LogHashes:
		return exportLogHashCols
	case transfer.LogCheckpoints:
		return exportLogCheckpointCols
	}
	return ""
}

// notExported names the tables, and the columns ("table.column") of the
// tables of transfer.Tables, that Export does not copy, and why. Every
// other table must be one of transfer.Tables and every other column read
// (TestExportCoversSchema checks), so that a migration adding ACME state
// cannot be forgotten by weir migrate-storage.
func notExported() map[string]string {
	const leases = "a lease is held by a running process, and none runs during the copy: " +
		"the target starts with every lease free, so the first replica claims the jobs at once"
	const derived = "kept from the rows of the tables exported, by the target's triggers and imports (migration 0012)"
	return map[string]string{
		"schema_migrations":      "the schema's history: the target keeps its own",
		"sqlite_sequence":        "AUTOINCREMENT's counters: read into Summary.AccountSeq and OrderSeq",
		"log_state":              "the verifiable log's size and served size: read into Summary.LogSize and LogServedSize",
		"leases":                 leases,
		"challenges.lease_owner": leases,
		"challenges.lease_until": leases,
		"orders.lease_owner":     leases,
		"orders.lease_until":     leases,
		"issuer_chains": "each certificate's issuer chain (certificates.issuer_chain): " +
			"the exported certificate carries its whole chain in ChainPEM",
		"crl_numbers": "the numbers of the last CRLs: the target's start at the clock's nanoseconds " +
			"(crl.Numberer), above the source's while the clocks agree",
		"plan_removals": "the renewal planners' journal of windows taken out (migration 0016), read by running replicas: " +
			"a replica of the target rebuilds its plan from the certificates at start",
		"object_counts":       derived,
		"cert_expiry_hours":   derived,
		"cert_expiry_seconds": derived,
		"cert_issued_hours":   derived,
		"cert_search":         derived,
	}
}

// Export reads every row of every table of transfer.Tables, in one read
// transaction (a consistent snapshot), and hands them to sink in that
// order, table by table, in batches of up to batch rows (0 means
// DefaultExportBatch), each table in primary-key order. It returns the
// number of rows of each table and the highest IDs ever assigned; it fails
// if the rows it read of a table are not as many as the table has.
func (e *Exporter) Export(ctx context.Context, sink transfer.Sink, batch int) (transfer.Summary, error) {
	if batch <= 0 {
		batch = DefaultExportBatch
	}
	sum := transfer.Summary{Counts: transfer.Counts{}}
	tx, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		return sum, fmt.Errorf("sqlite: export: begin: %w", err)
	}
	defer tx.Rollback() // read only: nothing to keep
	want := transfer.Counts{}
	for _, t := range transfer.Tables() {
		var n int64
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+string(t)).Scan(&n); err != nil {
			return sum, fmt.Errorf("sqlite: export: counting %s: %w", t, err)
		}
		want[t] = n
	}
	if sum.AccountSeq, sum.OrderSeq, err = sequences(ctx, tx); err != nil {
		return sum, err
	}
	issuers, err := issuerChains(ctx, tx)
	if err != nil {
		return sum, err
	}
	scanCert := func(row sqlrow.Scanner) (transfer.Certificate, error) { return scanCertRow(row, issuers) }

	steps := []func() (int64, error){
		func() (int64, error) {
			return exportTable(ctx, tx, transfer.AdminCreds, "name", batch, scanAdminCredRow, sink.AdminCredentials)
		},
		func() (int64, error) {
			return exportTable(ctx, tx, transfer.Tenants, "name", batch, scanTenantRow, sink.Tenants)
		},
		func() (int64, error) {
			return exportTable(ctx, tx, transfer.Accounts, "id", batch, scanAccountRow, sink.Accounts)
		},
		func() (int64, error) {
			return exportTable(ctx, tx, transfer.EABKeys, "id", batch, scanEABKeyRow, sink.EABKeys)
		},
		func() (int64, error) {
			return exportTable(ctx, tx, transfer.Authzs, "id", batch, scanAuthzRow, sink.Authzs)
		},
		func() (int64, error) {
			return exportTable(ctx, tx, transfer.Challenges, "id", batch, scanChallengeRow, sink.Challenges)
		},
		func() (int64, error) {
			return exportTable(ctx, tx, transfer.Orders, "seq", batch, scanOrderRow, sink.Orders)
		},
		func() (int64, error) {
			return exportTable(ctx, tx, transfer.Certificates, "serial", batch, scanCert, sink.Certificates)
		},
	}
	for i, t := range transfer.Tables()[:len(steps)] {
		n, err := steps[i]()
		if err != nil {
			return sum, err
		}
		sum.Counts[t] = n
	}
	logCounts, logSize, logServed, err := exportLog(ctx, tx, sink, batch) // export_log.go
	if err != nil {
		return sum, err
	}
	maps.Copy(sum.Counts, logCounts)
	sum.LogSize, sum.LogServedSize = logSize, logServed
	if err := transfer.Compare(want, sum.Counts); err != nil {
		return sum, fmt.Errorf("sqlite: export: %w", err)
	}
	// AUTOINCREMENT's counter is at least the greatest ID in use; the
	// maximum covers a database whose counter was lost.
	for _, q := range []struct {
		dst   *int64
		query string
	}{
		{&sum.AccountSeq, "SELECT COALESCE(MAX(id), 0) FROM accounts"},
		{&sum.OrderSeq, "SELECT COALESCE(MAX(seq), 0) FROM orders"},
	} {
		var n int64
		if err := tx.QueryRowContext(ctx, q.query).Scan(&n); err != nil {
			return sum, fmt.Errorf("sqlite: export: %w", err)
		}
		*q.dst = max(*q.dst, n)
	}
	return sum, nil
}

// sequences reads AUTOINCREMENT's counters of accounts and orders: the
// highest ID each ever assigned (0 if none).
func sequences(ctx context.Context, tx *sql.Tx) (accounts, orders int64, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT name, seq FROM sqlite_sequence WHERE name IN ('accounts', 'orders')`)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: export: reading sqlite_sequence: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			name string
			seq  int64
		)
		if err := rows.Scan(&name, &seq); err != nil {
			return 0, 0, fmt.Errorf("sqlite: export: reading sqlite_sequence: %w", err)
		}
		if name == "accounts" {
			accounts = seq
		} else {
			orders = seq
		}
	}
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("sqlite: export: reading sqlite_sequence: %w", err)
	}
	return accounts, orders, nil
}

// exportTable reads every row of table t in the order of key, scanning
// each with scan, and sends them to send in batches of up to batch rows.
// It returns the number of rows sent.
func exportTable[T any](ctx context.Context, tx *sql.Tx, t transfer.Table, key string, batch int,
	scan func(sqlrow.Scanner) (T, error), send func(context.Context, []T) error) (int64, error) {
	rows, err := tx.QueryContext(ctx, "SELECT "+exportColumns(t)+" FROM "+string(t)+" ORDER BY "+key)
	if err != nil {
		return 0, fmt.Errorf("sqlite: export %s: %w", t, err)
	}
	defer rows.Close()
	var (
		n   int64
		buf = make([]T, 0, batch)
	)
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		if err := send(ctx, buf); err != nil {
			return fmt.Errorf("export %s: %w", t, err)
		}
		n += int64(len(buf))
		buf = buf[:0]
		return nil
	}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return n, fmt.Errorf("sqlite: export %s: %w", t, err)
		}
		buf = append(buf, v)
		if len(buf) == batch {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("sqlite: export %s: %w", t, err)
	}
	return n, flush()
}

// nullPtr is the record form of a nullable integer column.
func nullPtr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

// The scanners of the rows of exportColumns, one per table.

func scanAccountRow(row sqlrow.Scanner) (transfer.Account, error) {
	var a transfer.Account
	err := row.Scan(&a.ID, &a.KeyThumbprint, &a.JWK, &a.Contact, &a.Status, &a.CreatedAt, &a.CreatedIP, &a.EABKeyID)
	return a, err
}

func scanAdminCredRow(row sqlrow.Scanner) (transfer.AdminCredential, error) {
	var r transfer.AdminCredential
	err := row.Scan(&r.Name, &r.Role, &r.SHA256, &r.CreatedAt, &r.CreatedBy, &r.NameLower)
	return r, err
}

func scanTenantRow(row sqlrow.Scanner) (transfer.Tenant, error) {
	var r transfer.Tenant
	err := row.Scan(&r.Name, &r.Policy, &r.CreatedAt, &r.UpdatedAt)
	return r, err
}

func scanEABKeyRow(row sqlrow.Scanner) (transfer.EABKey, error) {
	var (
		k                        transfer.EABKey
		boundAcct, bound, revoke sql.NullInt64
	)
	err := row.Scan(&k.ID, &k.Label, &k.HMACKey, &k.CreatedAt, &boundAcct, &bound, &revoke, &k.Tenant)
	k.BoundAccount, k.BoundAt, k.RevokedAt = nullPtr(boundAcct), nullPtr(bound), nullPtr(revoke)
	return k, err
}

func scanAuthzRow(row sqlrow.Scanner) (transfer.Authz, error) {
	var (
		a        transfer.Authz
		wildcard int64
	)
	err := row.Scan(&a.ID, &a.AccountID, &a.IdentType, &a.IdentValue, &wildcard, &a.Status, &a.Expires, &a.CreatedAt)
	a.Wildcard = wildcard != 0
	return a, err
}

func scanChallengeRow(row sqlrow.Scanner) (transfer.Challenge, error) {
	var (
		c       transfer.Challenge
		problem sql.NullString
	)
	err := row.Scan(&c.ID, &c.AuthzID, &c.Position, &c.Type, &c.Token, &c.Status, &c.Validated, &problem, &c.UpdatedAt)
	c.Error = nullStr(problem)
	return c, err
}

func scanOrderRow(row sqlrow.Scanner) (transfer.Order, error) {
	var (
		o       transfer.Order
		problem sql.NullString
	)
	err := row.Scan(&o.Seq, &o.ID, &o.AccountID, &o.Status, &o.Identifiers, &o.AuthzIDs, &o.NotBefore, &o.NotAfter,
		&o.Expires, &problem, &o.CertSerial, &o.CreatedAt, &o.Replaces, &o.Profile, &o.CSR)
	o.Error = nullStr(problem)
	return o, err
}

// scanCertRow reads a certificate with its whole chain in ChainPEM, joined
// from issuers (issuerChains) if the row names its issuer chain.
func scanCertRow(row sqlrow.Scanner, issuers map[int64][]byte) (transfer.Certificate, error) {
	var (
		c        transfer.Certificate
		issuer   sql.NullInt64
		revoked  sql.NullInt64
		renewNow int64
	)
	err := row.Scan(&c.Serial, &c.AccountID, &c.OrderID, &c.DER, &c.ChainPEM, &issuer, &c.Names, &c.NameSet,
		&c.NotBefore, &c.NotAfter, &c.IssuedAt, &revoked, &c.Reason, &c.Profile, &c.RenewalStart, &c.RenewalEnd,
		&renewNow, &c.Issuer, &c.CRLShard, &c.Validations)
	if err != nil {
		return c, err
	}
	c.RevokedAt, c.RenewNow = nullPtr(revoked), renewNow != 0
	if issuer.Valid && c.ChainPEM == nil {
		chain, ok := issuers[issuer.Int64]
		if !ok {
			return c, fmt.Errorf("certificate %q names issuer chain %d, which is not stored", c.Serial, issuer.Int64)
		}
		c.ChainPEM = joinChain(c.DER, chain)
	}
	return c, nil
}

// issuerChains reads every row of issuer_chains: one per intermediate
// that signed certificates since migration 0010.
func issuerChains(ctx context.Context, tx *sql.Tx) (map[int64][]byte, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, pem FROM issuer_chains`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: export: reading issuer_chains: %w", err)
	}
	defer rows.Close()
	out := map[int64][]byte{}
	for rows.Next() {
		var (
			id    int64
			chain []byte
		)
		if err := rows.Scan(&id, &chain); err != nil {
			return nil, fmt.Errorf("sqlite: export: reading issuer_chains: %w", err)
		}
		out[id] = chain
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: export: reading issuer_chains: %w", err)
	}
	return out, nil
}
