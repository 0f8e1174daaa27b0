// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
	"github.com/weir-pki/weir/storage/transfer"
)

// Import is a copy of ACME state into a database file in progress: a
// transfer.Sink that writes each batch it is given in one transaction,
// with statements prepared once per batch, keeping every ID. It holds the
// file's lock (weir.db.lock) from OpenImport to Close, so no weir opens
// the file meanwhile. The copy writes with synchronous=NORMAL: a crash
// may lose the last batches, and an interrupted import is run again on a
// new file.
//
// A certificate whose chain_pem is its leaf followed by an issuer chain is
// stored as FinalizeOrder stores it, with the issuer chain kept once in
// issuer_chains.
type Import struct {
	path   string
	db     *sql.DB // one connection
	unlock func()
	got    transfer.Counts // rows written, per table
	chains map[string]int64
}

var _ transfer.Sink = (*Import)(nil)

// OpenImport opens the database at path for an import, creating it (mode
// 0600) if it does not exist, and brings its schema up to date; now
// records when (nil means time.Now). It refuses a database whose tables
// of transfer.Tables hold any row. Close the Import when done.
func OpenImport(ctx context.Context, path string, now func() time.Time) (*Import, error) {
	if now == nil {
		now = time.Now
	}
	abs, lock, err := createLocked(path)
	if err != nil {
		return nil, err
	}
	im := &Import{path: abs, got: transfer.Counts{}, chains: map[string]int64{}, unlock: func() {
		if lock != nil {
			lock.Close()
		}
	}}
	pragmas := []string{
		fmt.Sprintf("busy_timeout(%d)", busyTimeoutMillis),
		"journal_mode(WAL)",
		"synchronous(NORMAL)",
		"foreign_keys(1)",
		"temp_store(MEMORY)",
		"cache_size(-65536)", // 64 MiB: the indexes being filled stay in memory
	}
	if im.db, err = sql.Open(driverName, dsn(abs, pragmas, url.Values{"_txlock": {"immediate"}})); err != nil {
		im.unlock()
		return nil, fmt.Errorf("sqlite: opening %s: %w", abs, err)
	}
	im.db.SetMaxOpenConns(1)
	im.db.SetMaxIdleConns(1)
	im.db.SetConnMaxLifetime(0)
	im.db.SetConnMaxIdleTime(0)
	if err := migrate(ctx, im.db, abs, now); err != nil {
		im.Close()
		return nil, err
	}
	counts, err := im.count(ctx)
	if err != nil {
		im.Close()
		return nil, err
	}
	for _, t := range transfer.Tables() {
		if counts[t] > 0 {
			im.Close()
			return nil, fmt.Errorf("sqlite: import: %s already holds ACME state (%s: %d rows): refusing to import into it", abs, t, counts[t])
		}
	}
	return im, nil
}

// Path returns the absolute path of the database file.
func (im *Import) Path() string { return im.path }

// Close closes the database and releases its lock.
func (im *Import) Close() error {
	err := im.db.Close()
	im.unlock()
	if err != nil {
		return fmt.Errorf("sqlite: closing %s: %w", im.path, err)
	}
	return nil
}

// count returns the rows of every table of transfer.Tables.
func (im *Import) count(ctx context.Context) (transfer.Counts, error) {
	counts := transfer.Counts{}
	for _, t := range transfer.Tables() {
		var n int64
		if err := im.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+string(t)).Scan(&n); err != nil {
			return nil, fmt.Errorf("sqlite: import: counting %s: %w", t, err)
		}
		counts[t] = n
	}
	return counts, nil
}

// insertRows writes n rows of table t, the values of the columns cols of
// row i being row(tx, i), in one transaction.
func (im *Import) insertRows(ctx context.Context, t transfer.Table, cols string, n int, row func(tx *sql.Tx, i int) ([]any, error)) error {
	if n == 0 {
		return nil
	}
	tx, err := im.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: import %s: %w", t, err)
	}
	defer tx.Rollback() // after Commit, a no-op
	marks := strings.TrimSuffix(strings.Repeat("?, ", strings.Count(cols, ",")+1), ", ")
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+string(t)+" ("+cols+") VALUES ("+marks+")")
	if err != nil {
		return fmt.Errorf("sqlite: import %s: %w", t, err)
	}
	defer stmt.Close()
	for i := range n {
		v, err := row(tx, i)
		if err != nil {
			return fmt.Errorf("sqlite: import %s: %w", t, err)
		}
		if _, err := stmt.ExecContext(ctx, v...); err != nil {
			return fmt.Errorf("sqlite: import %s: %w", t, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: import %s: %w", t, err)
	}
	im.got[t] += int64(n)
	return nil
}

// Accounts implements transfer.Sink.
func (im *Import) Accounts(ctx context.Context, rows []transfer.Account) error {
	return im.insertRows(ctx, transfer.Accounts, exportAccountCols, len(rows), func(_ *sql.Tx, i int) ([]any, error) {
		r := rows[i]
		return []any{r.ID, r.KeyThumbprint, r.JWK, r.Contact, r.Status, r.CreatedAt, r.CreatedIP, r.EABKeyID}, nil
	})
}

// EABKeys implements transfer.Sink.
func (im *Import) EABKeys(ctx context.Context, rows []transfer.EABKey) error {
	return im.insertRows(ctx, transfer.EABKeys, exportEABKeyCols, len(rows), func(_ *sql.Tx, i int) ([]any, error) {
		r := rows[i]
		return []any{r.ID, r.Label, r.HMACKey, r.CreatedAt, r.BoundAccount, r.BoundAt, r.RevokedAt, r.Tenant}, nil
	})
}

// AdminCredentials implements transfer.Sink.
func (im *Import) AdminCredentials(ctx context.Context, rows []transfer.AdminCredential) error {
	return im.insertRows(ctx, transfer.AdminCreds, exportAdminCredCols, len(rows), func(_ *sql.Tx, i int) ([]any, error) {
		r := rows[i]
		return []any{r.Name, r.Role, r.SHA256, r.CreatedAt, r.CreatedBy, r.NameLower}, nil
	})
}

// Tenants implements transfer.Sink.
func (im *Import) Tenants(ctx context.Context, rows []transfer.Tenant) error {
	return im.insertRows(ctx, transfer.Tenants, exportTenantCols, len(rows), func(_ *sql.Tx, i int) ([]any, error) {
		r := rows[i]
		return []any{r.Name, r.Policy, r.CreatedAt, r.UpdatedAt}, nil
	})
}

// Authzs implements transfer.Sink.
func (im *Import) Authzs(ctx context.Context, rows []transfer.Authz) error {
	return im.insertRows(ctx, transfer.Authzs, exportAuthzCols, len(rows), func(_ *sql.Tx, i int) ([]any, error) {
		r := rows[i]
		return []any{r.ID, r.AccountID, r.IdentType, r.IdentValue, r.Wildcard, r.Status, r.Expires, r.CreatedAt}, nil
	})
}

// Challenges implements transfer.Sink.
func (im *Import) Challenges(ctx context.Context, rows []transfer.Challenge) error {
	return im.insertRows(ctx, transfer.Challenges, exportChallengeCols, len(rows), func(_ *sql.Tx, i int) ([]any, error) {
		r := rows[i]
		return []any{r.ID, r.AuthzID, r.Position, r.Type, r.Token, r.Status, r.Validated, r.Error, r.UpdatedAt}, nil
	})
}

// Orders implements transfer.Sink.
func (im *Import) Orders(ctx context.Context, rows []transfer.Order) error {
	return im.insertRows(ctx, transfer.Orders, exportOrderCols, len(rows), func(_ *sql.Tx, i int) ([]any, error) {
		r := rows[i]
		return []any{r.Seq, r.ID, r.AccountID, r.Status, r.Identifiers, r.AuthzIDs, r.NotBefore, r.NotAfter,
			r.Expires, r.Error, r.CertSerial, r.CreatedAt, r.Replaces, r.Profile, r.CSR}, nil
	})
}

// Certificates implements transfer.Sink; each certificate's search keys
// (sqlrow.SearchKeys) are written with it.
func (im *Import) Certificates(ctx context.Context, rows []transfer.Certificate) error {
	var search *sql.Stmt // prepared in the batch's transaction
	defer func() {
		if search != nil {
			search.Close()
		}
	}()
	return im.insertRows(ctx, transfer.Certificates, exportCertCols, len(rows), func(tx *sql.Tx, i int) ([]any, error) {
		r := rows[i]
		names, err := sqlrow.StringsFromJSON(fmt.Sprintf("certificate %q names", r.Serial), r.Names)
		if err != nil {
			return nil, err
		}
		if search == nil {
			if search, err = tx.PrepareContext(ctx, writeSQL[wInsertCertSearch]); err != nil {
				return nil, err
			}
		}
		for _, k := range sqlrow.SearchKeys(names) {
			if _, err := search.ExecContext(ctx, k, r.Serial); err != nil {
				return nil, err
			}
		}
		chain, issuerID := r.ChainPEM, any(nil)
		if issuer, ok := splitChain(r.DER, r.ChainPEM); ok {
			id, err := im.issuerChainID(ctx, tx, issuer)
			if err != nil {
				return nil, err
			}
			chain, issuerID = nil, id
		}
		return []any{r.Serial, r.AccountID, r.OrderID, r.DER, chain, issuerID, r.Names, r.NameSet, r.NotBefore,
			r.NotAfter, r.IssuedAt, r.RevokedAt, r.Reason, r.Profile, r.RenewalStart, r.RenewalEnd, r.RenewNow, acme.IssuerOrDefault(r.Issuer), r.CRLShard,
			r.Validations}, nil
	})
}

// issuerChainID returns the ID of issuer in issuer_chains, inserting it
// if it is new.
func (im *Import) issuerChainID(ctx context.Context, tx *sql.Tx, issuer []byte) (int64, error) {
	if id, ok := im.chains[string(issuer)]; ok {
		return id, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO issuer_chains (pem) VALUES (?) ON CONFLICT (pem) DO NOTHING`, issuer); err != nil {
		return 0, fmt.Errorf("storing issuer chain: %w", err)
	}
	var id int64
	if err := tx.QueryRowContext(ctx, `SELECT id FROM issuer_chains WHERE pem = ?`, issuer).Scan(&id); err != nil {
		return 0, fmt.Errorf("reading issuer chain: %w", err)
	}
	// Kept for later batches only once this one commits; a batch that
	// fails ends the import.
	im.chains[string(issuer)] = id
	return id, nil
}

// Finish completes the import of what an export summed up as want: it
// moves AUTOINCREMENT's counters of account IDs and order sequence
// numbers past the highest the source ever assigned, refreshes the query
// planner's statistics, and checks that every table holds as many rows
// as this Import wrote (and as want counts, when it has counts). It
// returns the rows each table holds.
func (im *Import) Finish(ctx context.Context, want transfer.Summary) (transfer.Counts, error) {
	for _, seq := range []struct {
		table string
		seen  int64
	}{{"accounts", want.AccountSeq}, {"orders", want.OrderSeq}} {
		if seq.seen <= 0 {
			continue
		}
		// A row in sqlite_sequence exists once the table had a row.
		if _, err := im.db.ExecContext(ctx, `UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?`, seq.seen, seq.table); err != nil {
			return nil, fmt.Errorf("sqlite: import: advancing the counter of %s: %w", seq.table, err)
		}
	}
	if err := im.finishLog(ctx, want); err != nil { // import_log.go
		return nil, err
	}
	if _, err := im.db.ExecContext(ctx, `PRAGMA optimize=0x10002`); err != nil {
		return nil, fmt.Errorf("sqlite: import: optimize: %w", err)
	}
	got, err := im.count(ctx)
	if err != nil {
		return nil, err
	}
	if err := transfer.Compare(im.got, got); err != nil {
		return got, fmt.Errorf("sqlite: import: the tables do not hold the rows written: %w", err)
	}
	if want.Counts != nil {
		if err := transfer.Compare(want.Counts, got); err != nil {
			return got, fmt.Errorf("sqlite: import: the tables do not hold the rows of the source: %w", err)
		}
	}
	return got, nil
}
