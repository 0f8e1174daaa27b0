// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/transfer"
)

// NotEmptyError is returned by BeginImport for a schema whose tables
// already hold ACME state, unless asked to empty them.
type NotEmptyError struct {
	Schema string
	Counts transfer.Counts // the rows of each table
}

// Error implements error.
func (e *NotEmptyError) Error() string {
	var parts []string
	for _, t := range transfer.Tables() {
		if n := e.Counts[t]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", t, n))
		}
	}
	return fmt.Sprintf("postgres: schema %q already holds ACME state (%s): refusing to import into it",
		e.Schema, strings.Join(parts, ", "))
}

// Import is a copy of ACME state into the store's tables in progress, for
// weir migrate-storage: a transfer.Sink that writes each batch it is given
// in one transaction, with COPY, keeping every ID (account IDs and order
// sequence numbers included). It holds the schema's migration lock from
// BeginImport to Close, so a weir that starts on the schema meanwhile
// waits for the copy to end before it serves.
type Import struct {
	conn    *pgxpool.Conn
	schema  string
	got     transfer.Counts // rows written, per table
	emptied transfer.Counts // rows removed by BeginImport's force
}

var _ transfer.Sink = (*Import)(nil)

// BeginImport starts a copy into the store's tables. It fails with a
// *NotEmptyError if any of the tables of transfer.Tables holds a row,
// unless force is set: then it empties them first (TRUNCATE … RESTART
// IDENTITY CASCADE, so with whatever refers to them), which is how an
// import that failed half-way is run again. Close the Import when done.
func (s *Store) BeginImport(ctx context.Context, force bool) (*Import, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: import: connecting: %w", err)
	}
	schema, err := currentSchema(ctx, conn)
	if err != nil {
		conn.Release()
		return nil, fmt.Errorf("postgres: import: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, $2)`, migrationLockClass, lockKey(schema)); err != nil {
		conn.Conn().Close(context.WithoutCancel(ctx))
		conn.Release()
		return nil, fmt.Errorf("postgres: import: schema %q: taking the migration lock: %w", schema, err)
	}
	im := &Import{conn: conn, schema: schema, got: transfer.Counts{}, emptied: transfer.Counts{}}
	counts, err := im.count(ctx)
	if err != nil {
		im.Close()
		return nil, err
	}
	empty := true
	for _, n := range counts {
		empty = empty && n == 0
	}
	switch {
	case empty:
	case !force:
		im.Close()
		return nil, &NotEmptyError{Schema: schema, Counts: counts}
	default:
		var names []string
		for _, t := range transfer.Tables() {
			names = append(names, pgx.Identifier{string(t)}.Sanitize())
		}
		if _, err := conn.Exec(ctx, `TRUNCATE `+strings.Join(names, ", ")+` RESTART IDENTITY CASCADE`); err != nil {
			im.Close()
			return nil, fmt.Errorf("postgres: import: schema %q: emptying the tables: %w", schema, err)
		}
		im.emptied = counts
	}
	return im, nil
}

// Schema returns the schema the import writes to.
func (im *Import) Schema() string { return im.schema }

// Target names where the import writes, for the operator: the database,
// its server and the schema, without the password.
func (im *Import) Target() string {
	c := im.conn.Conn().Config()
	return fmt.Sprintf("PostgreSQL (database %q on %s:%d, schema %q)", c.Database, c.Host, c.Port, im.schema)
}

// Emptied returns the rows BeginImport removed, per table: none unless it
// was forced on a schema that was not empty.
func (im *Import) Emptied() transfer.Counts { return im.emptied }

// Close releases the migration lock and the connection.
func (im *Import) Close() {
	if im.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	defer cancel()
	if _, err := im.conn.Exec(ctx, `SELECT pg_advisory_unlock($1, $2)`, migrationLockClass, lockKey(im.schema)); err != nil {
		// Closing the session releases its locks.
		im.conn.Conn().Close(ctx)
	}
	im.conn.Release()
	im.conn = nil
}

// count returns the rows of every table of transfer.Tables.
func (im *Import) count(ctx context.Context) (transfer.Counts, error) {
	counts := transfer.Counts{}
	for _, t := range transfer.Tables() {
		var n int64
		if err := im.conn.QueryRow(ctx, `SELECT COUNT(*) FROM `+pgx.Identifier{string(t)}.Sanitize()).Scan(&n); err != nil {
			return nil, fmt.Errorf("postgres: import: counting %s: %w", t, err)
		}
		counts[t] = n
	}
	return counts, nil
}

// copyRows writes n rows of table t, the columns cols of row i being
// row(i), in one transaction.
func (im *Import) copyRows(ctx context.Context, t transfer.Table, cols []string, n int, row func(i int) []any) error {
	if n == 0 {
		return nil
	}
	var copied int64
	err := pgx.BeginFunc(ctx, im.conn, func(tx pgx.Tx) error {
		// COPY writes the given values into identity columns, as INSERT …
		// OVERRIDING SYSTEM VALUE does: account IDs and order sequence
		// numbers are kept (Finish moves the sequences past them).
		var err error
		copied, err = tx.CopyFrom(ctx, pgx.Identifier{string(t)}, cols,
			pgx.CopyFromSlice(n, func(i int) ([]any, error) { return row(i), nil }))
		return err
	})
	if err != nil {
		return writeErr("import "+string(t), err)
	}
	if copied != int64(n) {
		return fmt.Errorf("postgres: import %s: copied %d rows of %d", t, copied, n)
	}
	im.got[t] += copied
	return nil
}

// AdminCredentials implements transfer.Sink.
func (im *Import) AdminCredentials(ctx context.Context, rows []transfer.AdminCredential) error {
	cols := []string{"name", "role", "sha256", "created_at", "created_by", "name_lower"}
	return im.copyRows(ctx, transfer.AdminCreds, cols, len(rows), func(i int) []any {
		r := rows[i]
		return []any{r.Name, r.Role, r.SHA256, r.CreatedAt, r.CreatedBy, r.NameLower}
	})
}

// Tenants implements transfer.Sink.
func (im *Import) Tenants(ctx context.Context, rows []transfer.Tenant) error {
	cols := []string{"name", "policy", "created_at", "updated_at"}
	return im.copyRows(ctx, transfer.Tenants, cols, len(rows), func(i int) []any {
		r := rows[i]
		return []any{r.Name, r.Policy, r.CreatedAt, r.UpdatedAt}
	})
}

// Accounts implements transfer.Sink.
func (im *Import) Accounts(ctx context.Context, rows []transfer.Account) error {
	cols := []string{"id", "key_thumbprint", "jwk", "contact", "status", "created_at", "created_ip", "eab_key_id"}
	return im.copyRows(ctx, transfer.Accounts, cols, len(rows), func(i int) []any {
		r := rows[i]
		return []any{r.ID, r.KeyThumbprint, r.JWK, r.Contact, r.Status, r.CreatedAt, r.CreatedIP, r.EABKeyID}
	})
}

// EABKeys implements transfer.Sink.
func (im *Import) EABKeys(ctx context.Context, rows []transfer.EABKey) error {
	cols := []string{"id", "label", "hmac_key", "created_at", "bound_account", "bound_at", "revoked_at", "tenant"}
	return im.copyRows(ctx, transfer.EABKeys, cols, len(rows), func(i int) []any {
		r := rows[i]
		return []any{r.ID, r.Label, r.HMACKey, r.CreatedAt, r.BoundAccount, r.BoundAt, r.RevokedAt, r.Tenant}
	})
}

// Authzs implements transfer.Sink.
func (im *Import) Authzs(ctx context.Context, rows []transfer.Authz) error {
	cols := []string{"id", "account_id", "ident_type", "ident_value", "wildcard", "status", "expires", "created_at"}
	return im.copyRows(ctx, transfer.Authzs, cols, len(rows), func(i int) []any {
		r := rows[i]
		return []any{r.ID, r.AccountID, r.IdentType, r.IdentValue, r.Wildcard, r.Status, r.Expires, r.CreatedAt}
	})
}

// Challenges implements transfer.Sink.
func (im *Import) Challenges(ctx context.Context, rows []transfer.Challenge) error {
	cols := []string{"id", "authz_id", "position", "type", "token", "status", "validated", "error", "updated_at"}
	return im.copyRows(ctx, transfer.Challenges, cols, len(rows), func(i int) []any {
		r := rows[i]
		return []any{r.ID, r.AuthzID, r.Position, r.Type, r.Token, r.Status, r.Validated, r.Error, r.UpdatedAt}
	})
}

// Orders implements transfer.Sink.
func (im *Import) Orders(ctx context.Context, rows []transfer.Order) error {
	cols := []string{"seq", "id", "account_id", "status", "identifiers", "authz_ids", "not_before", "not_after",
		"expires", "error", "cert_serial", "created_at", "replaces", "profile", "csr"}
	return im.copyRows(ctx, transfer.Orders, cols, len(rows), func(i int) []any {
		r := rows[i]
		return []any{r.Seq, r.ID, r.AccountID, r.Status, r.Identifiers, r.AuthzIDs, r.NotBefore, r.NotAfter,
			r.Expires, r.Error, r.CertSerial, r.CreatedAt, r.Replaces, r.Profile, r.CSR}
	})
}

// Certificates implements transfer.Sink.
func (im *Import) Certificates(ctx context.Context, rows []transfer.Certificate) error {
	cols := []string{"serial", "account_id", "order_id", "der", "chain_pem", "names", "name_set", "not_before",
		"not_after", "issued_at", "revoked_at", "reason", "profile", "renewal_start", "renewal_end", "renew_now", "issuer", "crl_shard", "validations"}
	return im.copyRows(ctx, transfer.Certificates, cols, len(rows), func(i int) []any {
		r := rows[i]
		return []any{r.Serial, r.AccountID, r.OrderID, r.DER, r.ChainPEM, r.Names, r.NameSet, r.NotBefore,
			r.NotAfter, r.IssuedAt, r.RevokedAt, r.Reason, r.Profile, r.RenewalStart, r.RenewalEnd, r.RenewNow, acme.IssuerOrDefault(r.Issuer), r.CRLShard,
			r.Validations}
	})
}

// Finish completes the import of what an export summed up as want: it
// moves the identity sequences of account IDs and order sequence numbers
// past the highest the source ever assigned (so no ID is used twice),
// refreshes the planner's statistics of the tables, and checks that every
// table now holds as many rows as want counts and as this Import wrote.
// It returns the rows each table holds.
func (im *Import) Finish(ctx context.Context, want transfer.Summary) (transfer.Counts, error) {
	for _, seq := range []struct {
		table, col string
		seen       int64
	}{
		{"accounts", "id", want.AccountSeq},
		{"orders", "seq", want.OrderSeq},
		{"log_entries", "id", 0},
	} {
		// setval(…, n, true): the next value is n+1. A table that never
		// had a row keeps its sequence as it is.
		q := fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%[1]s', '%[2]s'), m, true)
			FROM (SELECT GREATEST($1::bigint, (SELECT COALESCE(MAX(%[2]s), 0) FROM %[1]s)) AS m) AS x WHERE m > 0`,
			seq.table, seq.col)
		if _, err := im.conn.Exec(ctx, q, seq.seen); err != nil {
			return nil, fmt.Errorf("postgres: import: advancing the sequence of %s.%s: %w", seq.table, seq.col, err)
		}
	}
	if err := im.finishLog(ctx, want); err != nil { // import_log.go
		return nil, err
	}
	var names []string
	for _, t := range transfer.Tables() {
		names = append(names, pgx.Identifier{string(t)}.Sanitize())
	}
	// And what the tables' triggers filled (migration 0008): the planner
	// of a search weighs cert_search's ranges by its statistics.
	names = append(names, "object_counts", "cert_expiry_hours", "cert_expiry_seconds", "cert_issued_hours", "cert_search")
	if _, err := im.conn.Exec(ctx, `ANALYZE `+strings.Join(names, ", ")); err != nil {
		return nil, fmt.Errorf("postgres: import: ANALYZE: %w", err)
	}
	got, err := im.count(ctx)
	if err != nil {
		return nil, err
	}
	if err := transfer.Compare(im.got, got); err != nil {
		return got, fmt.Errorf("postgres: import: the tables do not hold the rows written (did a weir write to schema %q meanwhile?): %w", im.schema, err)
	}
	if want.Counts != nil {
		if err := transfer.Compare(want.Counts, got); err != nil {
			return got, fmt.Errorf("postgres: import: the tables do not hold the rows of the source: %w", err)
		}
	}
	return got, nil
}
