// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/weir-pki/weir/storage/sqlrow"
)

// The store's statements are prepared once, at Open: the driver keeps a
// prepared statement compiled and only resets and rebinds it for the next
// execution, whereas a statement given as text is parsed and planned again
// every time, which costs more than running it. Reader statements are
// prepared on the reader pool (database/sql prepares each again on every
// connection of the pool that runs it, once); writer statements on the
// writer connection, and the writer goroutine binds them to its
// transactions with Tx.StmtContext, which reuses the compiled statement of
// the connection.

// readStmt names a statement of the reader pool.
type readStmt int

const (
	rGetAccount readStmt = iota
	rGetAccountByKey
	rGetOrder
	rListOrders
	rGetAuthz
	rFindValidAuthz         // wildcard = 0
	rFindValidAuthzWildcard // wildcard = 1
	rGetChallenge
	rGetCertificate
	rListRevoked
	numReadStmts
)

// findValidAuthzSQL selects the latest-expiring valid authorization of an
// account for an identifier, with its challenges in order. wildcard is a
// literal, 0 or 1, not a parameter: SQLite plans a column = ? term of an
// ORDER BY query differently for the values 0 and 1, and rebinding between
// them would make it compile the statement again. So is the status, which
// the partial index authzs_valid requires for the same reason. The account
// ID is a parameter that can be 1 (the first account), so its term is
// account_id = +?: SQLite does not look at the value of a parameter under
// a unary plus, and the term still selects on the index.
func findValidAuthzSQL(wildcard string) string {
	return `SELECT ` + sqlrow.AuthzChallengeCols + `
		FROM (SELECT ` + sqlrow.AuthzCols + ` FROM authzs
		      WHERE account_id = +? AND ident_type = ? AND ident_value = ? AND wildcard = ` + wildcard + `
		        AND status = 'valid' AND expires > ?
		      ORDER BY expires DESC, id DESC LIMIT 1) AS a
		LEFT JOIN challenges AS c ON c.authz_id = a.id
		ORDER BY c.position`
}

// readSQL is the text of each readStmt.
var readSQL = [numReadStmts]string{
	rGetAccount:      `SELECT ` + sqlrow.AccountCols + ` FROM accounts WHERE id = ?`,
	rGetAccountByKey: `SELECT ` + sqlrow.AccountCols + ` FROM accounts WHERE key_thumbprint = ?`,
	rGetOrder:        `SELECT ` + sqlrow.OrderCols + ` FROM orders WHERE id = ?`,
	rListOrders:      `SELECT seq, id FROM orders WHERE account_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
	rGetAuthz: `SELECT ` + sqlrow.AuthzChallengeCols + `
		FROM authzs AS a LEFT JOIN challenges AS c ON c.authz_id = a.id
		WHERE a.id = ? ORDER BY c.position`,
	rFindValidAuthz:         findValidAuthzSQL("0"),
	rFindValidAuthzWildcard: findValidAuthzSQL("1"),
	rGetChallenge:           `SELECT ` + sqlrow.ChallengeCols + ` FROM challenges WHERE id = ?`,
	rGetCertificate:         `SELECT ` + certCols + ` FROM certificates WHERE serial = ?`,
	rListRevoked: `SELECT ` + sqlrow.RevocationCols + ` FROM certificates
		WHERE revoked_at IS NOT NULL AND not_after >= ?`,
}

// writeStmt names a statement of the writer connection.
type writeStmt int

const (
	wInsertAccount writeStmt = iota
	wUpdateAccount
	wChangeAccountKey
	wAccountExists
	wInsertOrder
	wUpdateOrder
	wOrderExists
	wInsertAuthz
	wAuthzOwner
	wUpdateAuthz
	wAuthzExists
	wInsertChallenge
	wUpdateAuthzChallenge
	wChallengeExists
	wFinalizeOrder
	wInsertCertificate
	wInsertCertSearch
	wRevokeCertificate
	wInsertLogEntry // translog.go
	wLogMoveSize
	wLogIndexEntry
	wLogInsertHash
	wLogInsertCheckpoint
	wCertificateExists
	wInsertIssuerChain
	wIssuerChainID
	wNextCRLNumber      // revocations.go
	wPlanRemovalRevoked // renewal.go
	wPlanRemovalMoved
	wPrunePlanRemovals
	wStartChallenge // leases.go
	wClaimChallenge
	wClaimChallenges
	wReleaseChallenge
	wStartFinalize
	wClaimOrders
	wTryLease
	wReleaseLease
	wSavepoint
	wRelease
	wRollbackTo
	numWriteStmts
)

// writeSQL is the text of each writeStmt.
var writeSQL = [numWriteStmts]string{
	wInsertAccount:    `INSERT INTO accounts (` + sqlrow.AccountInsertCols + `) VALUES (?, ?, ?, ?, ?, ?, ?)`,
	wUpdateAccount:    `UPDATE accounts SET contact = ?, status = ? WHERE id = ? AND status = ?`,
	wChangeAccountKey: `UPDATE accounts SET key_thumbprint = ?, jwk = ? WHERE id = ? AND key_thumbprint = ?`,
	wAccountExists:    `SELECT 1 FROM accounts WHERE id = ?`,
	wInsertOrder: `INSERT INTO orders (` + sqlrow.OrderInsertCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	wUpdateOrder: `UPDATE orders SET status = ?, error = ?, cert_serial = ?, lease_owner = NULL, lease_until = NULL
		WHERE id = ? AND status = ?`,
	wOrderExists:     `SELECT 1 FROM orders WHERE id = ?`,
	wInsertAuthz:     `INSERT INTO authzs (` + sqlrow.AuthzCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
	wAuthzOwner:      `SELECT account_id FROM authzs WHERE id = ?`,
	wUpdateAuthz:     `UPDATE authzs SET status = ?, expires = ? WHERE id = ? AND status = ?`,
	wAuthzExists:     `SELECT 1 FROM authzs WHERE id = ?`,
	wInsertChallenge: `INSERT INTO challenges (` + sqlrow.ChallengeInsertCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	wUpdateAuthzChallenge: `UPDATE challenges SET status = ?1, error = ?2, validated = ?3, updated_at = ?4, ` + keepLeaseSQL + `
		WHERE id = ?5 AND authz_id = ?6`,
	wChallengeExists: `SELECT 1 FROM challenges WHERE id = ?`,
	wFinalizeOrder: `UPDATE orders SET status = ?, cert_serial = ?, lease_owner = NULL, lease_until = NULL
		WHERE id = ? AND status = ?`,
	wInsertCertificate: `INSERT INTO certificates (` + sqlrow.CertInsertCols + `, issuer_chain, revoked_at, reason)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0)`,
	wInsertCertSearch:    `INSERT OR IGNORE INTO cert_search (key, serial) VALUES (?, ?)`,
	wRevokeCertificate:   `UPDATE certificates SET revoked_at = ?, reason = ? WHERE serial = ? AND revoked_at IS NULL`,
	wInsertLogEntry:      q(sqlrow.LogInsertEntrySQL),
	wLogMoveSize:         q(sqlrow.LogMoveSizeSQL),
	wLogIndexEntry:       q(sqlrow.LogIndexEntrySQL),
	wLogInsertHash:       q(sqlrow.LogInsertHashSQL),
	wLogInsertCheckpoint: q(sqlrow.LogInsertCheckpointSQL),
	wCertificateExists:   `SELECT 1 FROM certificates WHERE serial = ?`,
	wInsertIssuerChain:   `INSERT INTO issuer_chains (pem) VALUES (?) ON CONFLICT (pem) DO NOTHING`,
	wNextCRLNumber:       strings.ReplaceAll(sqlrow.NextCRLNumberSQL, "$", "?"),
	wIssuerChainID:       `SELECT id FROM issuer_chains WHERE pem = ?`,
	wPlanRemovalRevoked:  strings.ReplaceAll(sqlrow.PlanRemovalInsertSQL, "$", "?") + `AND serial = ?2`,
	wPlanRemovalMoved:    strings.ReplaceAll(sqlrow.PlanRemovalInsertSQL, "$", "?") + `AND serial = ?2 AND revoked_at IS NULL`,
	wPrunePlanRemovals:   strings.ReplaceAll(sqlrow.PlanRemovalsPruneSQL, "$", "?"),
	wStartChallenge:      startChallengeSQL,
	wClaimChallenge:      claimChallengeSQL,
	wClaimChallenges:     claimChallengesSQL,
	wReleaseChallenge:    releaseChallengeSQL,
	wStartFinalize:       startFinalizeSQL,
	wClaimOrders:         claimOrdersSQL,
	wTryLease:            tryLeaseSQL,
	wReleaseLease:        releaseLeaseSQL,
	wSavepoint:           `SAVEPOINT op`,
	wRelease:             `RELEASE op`,
	wRollbackTo:          `ROLLBACK TO op`,
}

// prepareStmts prepares the reader and writer statements.
func (s *Store) prepareStmts(ctx context.Context) error {
	for i, q := range readSQL {
		st, err := s.r.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("sqlite: preparing %q: %w", q, err)
		}
		s.rs[i] = st
	}
	for i, q := range writeSQL {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("sqlite: preparing %q: %w", q, err)
		}
		s.ws[i] = st
	}
	return nil
}

// closeStmts closes the prepared statements.
func (s *Store) closeStmts() error {
	var errs []error
	for i, st := range s.rs {
		if st != nil {
			errs = append(errs, st.Close())
			s.rs[i] = nil
		}
	}
	for i, st := range s.ws {
		if st != nil {
			errs = append(errs, st.Close())
			s.ws[i] = nil
		}
	}
	return errors.Join(errs...)
}

// readCtx returns the context a read runs its statement with: ctx without
// its cancellation, once checked. A read is a single indexed lookup that
// takes microseconds, and a cancelable context makes the driver start a
// goroutine to watch it for every statement and discard the connection
// after an interrupt.
func readCtx(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return context.WithoutCancel(ctx), nil
}

// queryRow runs the reader statement id with args and returns its row.
func (s *Store) queryRow(ctx context.Context, id readStmt, args ...any) *sql.Row {
	return s.rs[id].QueryRowContext(ctx, args...)
}

// query runs the reader statement id with args.
func (s *Store) query(ctx context.Context, id readStmt, args ...any) (*sql.Rows, error) {
	return s.rs[id].QueryContext(ctx, args...)
}
