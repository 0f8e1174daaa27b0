// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/renewal"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// FinalizeOrder stores cert and moves order cert.OrderID from processing to
// valid with CertSerial set to cert.Serial, in one transaction, committed
// when FinalizeOrder returns. The error wraps acme.ErrConflict, and
// nothing is stored, if the order is not processing, the serial is taken,
// or another order replacing the same certificate is already valid.
func (s *Store) FinalizeOrder(ctx context.Context, cert *acme.Certificate) error {
	if !validKey(cert.OrderID) {
		return drv.NotFound(fmt.Sprintf("finalize order %q with certificate %q", cert.OrderID, cert.Serial))
	}
	row, err := sqlrow.NewCertRow(drv, cert)
	if err != nil {
		return err
	}
	what := row.What
	// One round trip for both statements, one for the COMMIT
	// (pipeline.go). The row lock the UPDATE takes makes concurrent
	// finalizations of the order wait for this transaction, then find it
	// valid; should it match no row, the INSERT after it is rolled back.
	return s.inPipelinedTx(ctx, what, func(b *pgx.Batch) {
		b.Queue(`UPDATE orders SET status = $1, cert_serial = $2, lease_owner = NULL, lease_until = NULL
			WHERE id = $3 AND status = $4`,
			string(acme.StatusValid), cert.Serial, cert.OrderID, string(acme.StatusProcessing))
		// The log entry (transparency.Store) rides on the same statement.
		b.Queue(`WITH l AS (INSERT INTO log_entries (entry, serial)
				SELECT $17::bytea, $18::text WHERE $17::bytea IS NOT NULL)
			INSERT INTO certificates (`+sqlrow.CertInsertCols+`, revoked_at, reason)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, NULL, 0)`,
			append(row.Values(cert.ChainPEM), cert.LogEntry, cert.Serial)...)
	}, func(q querier, tags []pgconn.CommandTag, failed *stmtError) error {
		if len(tags) > 0 && tags[0].RowsAffected() == 0 {
			// Whatever the INSERT did is rolled back.
			return missErr(ctx, q, what, "order is not processing", orderExists, cert.OrderID)
		}
		if failed != nil {
			// orders_replaces_valid (the UPDATE): another order already
			// replaced the certificate this one replaces; the primary key
			// (the INSERT): the serial is taken.
			return writeErr(what, failed.Err)
		}
		return nil
	})
}

// GetCertificate returns the certificate with the given serial.
func (s *Store) GetCertificate(ctx context.Context, serial string) (*acme.Certificate, error) {
	what := fmt.Sprintf("certificate %q", serial)
	if !validKey(serial) {
		return nil, drv.NotFound(what)
	}
	c, err := sqlrow.ScanCert(s.pool.QueryRow(ctx, `SELECT `+sqlrow.CertCols+` FROM certificates WHERE serial = $1`, serial))
	if err != nil {
		return nil, drv.RowErr(what, err)
	}
	return c, nil
}

// RevokeCertificate marks the certificate revoked at the given time for the
// given RFC 5280 reason, with logEntry (unless nil) pending in the
// verifiable log. The error wraps acme.ErrConflict if it already is.
func (s *Store) RevokeCertificate(ctx context.Context, serial string, reason int, at time.Time, logEntry []byte) error {
	what := fmt.Sprintf("revoke certificate %q", serial)
	if err := drv.CheckRevocation(what, at); err != nil {
		return err
	}
	if !validKey(serial) {
		return drv.NotFound(what)
	}
	// One statement: the revocation, its window's removal from the plan
	// (renewal.Removal), the deletion of the removals kept long enough,
	// and the log entry (transparency.Store), written only with the revocation.
	var n int
	err := s.pool.QueryRow(ctx, `WITH r AS (UPDATE certificates SET revoked_at = $1, reason = $2
			WHERE serial = $3 AND revoked_at IS NULL RETURNING serial),
		j AS (`+sqlrow.PlanRemovalInsertSQL+` AND serial IN (SELECT serial FROM r) RETURNING 1),
		d AS (`+pruneSQL(4)+` AND EXISTS (SELECT 1 FROM j)),
		l AS (INSERT INTO log_entries (entry) SELECT $5::bytea FROM r WHERE $5::bytea IS NOT NULL)
		SELECT count(*) FROM r`,
		sqlrow.ToNanos(at), reason, serial, sqlrow.PlanRemovalsPruneArg(at), logEntry).Scan(&n)
	if err != nil {
		return writeErr(what, err)
	}
	if n > 0 {
		return nil
	}
	return missErr(ctx, s.pool, what, "already revoked", `SELECT 1 FROM certificates WHERE serial = $1`, serial)
}

// ListRevoked returns the revocations of the certificates that have not
// expired at now (NotAfter is not before now), an index-only scan of
// certificates_revoked.
func (s *Store) ListRevoked(ctx context.Context, now time.Time) ([]acme.Revocation, error) {
	const what = "list revoked certificates"
	if err := drv.CheckTimes(what, now); err != nil {
		return nil, err
	}
	return collect(ctx, s.pool, what, `SELECT `+sqlrow.RevocationCols+` FROM certificates
		WHERE revoked_at IS NOT NULL AND not_after >= $1`, []any{sqlrow.ToNanos(now)}, sqlrow.ScanRevocation)
}

// SetRenewalWindows implements acme.Store, in one statement; it marks the
// certificates RenewNow and records the unrevoked windows it moves that
// ended after at (renewal.Removal). Serials that name no certificate are
// skipped.
func (s *Store) SetRenewalWindows(ctx context.Context, serials []string, start, end, at time.Time) error {
	const what = "set renewal windows"
	if err := drv.CheckTimes(what, start, end, at); err != nil {
		return err
	}
	keys := make([]string, 0, len(serials))
	for _, serial := range serials {
		if validKey(serial) {
			keys = append(keys, serial)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	// One statement: every window moves, or none. The removals read the
	// windows before the move (the statement's snapshot).
	_, err := s.pool.Exec(ctx, `WITH j AS (`+sqlrow.PlanRemovalInsertSQL+` AND serial = ANY($2) AND revoked_at IS NULL RETURNING 1),
		d AS (`+pruneSQL(5)+` AND EXISTS (SELECT 1 FROM j))
		UPDATE certificates SET renewal_start = $3, renewal_end = $4, renew_now = true WHERE serial = ANY($2)`,
		sqlrow.ToNanos(at), keys, sqlrow.ToNanos(start), sqlrow.ToNanos(end), sqlrow.PlanRemovalsPruneArg(at))
	if err != nil {
		return drv.Wrap(what, err)
	}
	return nil
}

// pruneSQL is sqlrow.PlanRemovalsPruneSQL with its parameter numbered n.
func pruneSQL(n int) string {
	return strings.Replace(sqlrow.PlanRemovalsPruneSQL, "$1", fmt.Sprintf("$%d", n), 1)
}

// RenewalWindows implements acme.Inventory.
// A page reads the index certificates_renewal from the previous page's
// last window.
func (s *Store) RenewalWindows(ctx context.Context, after, before time.Time, from renewal.Window, limit int) ([]renewal.Window, error) {
	const what = "renewal windows"
	if err := drv.CheckTimes(what, after, before); err != nil {
		return nil, err
	}
	return collect(ctx, s.pool, what, sqlrow.RenewalWindowsSQL, sqlrow.RenewalWindowArgs(after, before, from, limit), sqlrow.ScanRenewalWindow)
}

// IssuedWindows implements acme.Inventory: a range of the index
// certificates_issued per page.
func (s *Store) IssuedWindows(ctx context.Context, since time.Time, from renewal.IssuedWindow, limit int) ([]renewal.IssuedWindow, error) {
	const what = "issued windows"
	if err := drv.CheckTimes(what, since); err != nil {
		return nil, err
	}
	return collect(ctx, s.pool, what, sqlrow.IssuedWindowsSQL, sqlrow.IssuedWindowArgs(since, from, limit), sqlrow.ScanIssuedWindow)
}

// PlanRemovals implements acme.Inventory: a range of the index
// plan_removals_at per page.
func (s *Store) PlanRemovals(ctx context.Context, since time.Time, from renewal.Removal, limit int) ([]renewal.Removal, error) {
	const what = "plan removals"
	if err := drv.CheckTimes(what, since); err != nil {
		return nil, err
	}
	return collect(ctx, s.pool, what, sqlrow.PlanRemovalsSQL, sqlrow.PlanRemovalArgs(since, from, limit), sqlrow.ScanPlanRemoval)
}
