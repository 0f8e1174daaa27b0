// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"time"

	"github.com/weir-pki/weir/acme"
)

// The overview's counts are kept, not counted: both schemas keep, in the
// transactions that write the rows they count (triggers), object_counts
// (accounts and orders per status, every certificate and the revoked
// ones) and the certificates not revoked by the hour and by the second of
// their not_after (cert_expiry_hours, cert_expiry_seconds). A PostgreSQL
// row of these may be split in several (a shard column), so that
// concurrent transactions do not queue for one row: every read sums.

// CountsSQL selects kind, status and count of every row of object_counts,
// and the row ('expired', ”, n) of the certificates not revoked whose
// not_after is at or before a time: $1 is its hour and $2 its second
// (Unix), so whole hours before its hour and then the seconds of its hour
// up to it. Certificates' not_after are whole seconds (X.509 times), so
// the count is exact. One statement, so one snapshot.
const CountsSQL = `SELECT kind, status, CAST(SUM(n) AS BIGINT) FROM object_counts GROUP BY kind, status
	UNION ALL
	SELECT 'expired', '', CAST((SELECT COALESCE(SUM(n), 0) FROM cert_expiry_hours WHERE hour < $1)
		+ (SELECT COALESCE(SUM(n), 0) FROM cert_expiry_seconds WHERE second >= $1 * 3600 AND second <= $2) AS BIGINT)`

// RevokedCountSQL is crl.RevocationCounter's count, the revoked
// certificates, from the count kept (object_counts, a row per shard on
// PostgreSQL) rather than counted: the CRL updater asks it several times
// a second, and counting 50,000 revocations took 25 ms each time.
// Certificates are never deleted, so it grows by one per revocation.
const RevokedCountSQL = `SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM object_counts WHERE kind = 'revoked' AND status = ''`

// CountsArgs are the arguments of CountsSQL at now.
func CountsArgs(now time.Time) []any {
	s := ToNanos(now) / int64(time.Second)
	return []any{s / 3600, s}
}

// CountsBuilder turns the rows of CountsSQL into acme.Counts. States and statuses with no row, or a count of 0,
// are left out.
type CountsBuilder struct {
	c                       acme.Counts
	certs, revoked, expired int
}

// NewCountsBuilder starts empty counts.
func NewCountsBuilder() *CountsBuilder {
	return &CountsBuilder{c: acme.Counts{Accounts: map[acme.Status]int{}, Orders: map[acme.Status]int{}, Certificates: map[acme.CertState]int{}}}
}

// Scan reads one row of CountsSQL into the counts (for Collect).
func (b *CountsBuilder) Scan(row Scanner) (struct{}, error) {
	var kind, status string
	var n int
	if err := row.Scan(&kind, &status, &n); err != nil {
		return struct{}{}, err
	}
	b.add(kind, status, n)
	return struct{}{}, nil
}

// add counts n of kind and status.
func (b *CountsBuilder) add(kind, status string, n int) {
	if n == 0 {
		return
	}
	switch kind {
	case "accounts":
		b.c.Accounts[acme.Status(status)] += n
	case "orders":
		b.c.Orders[acme.Status(status)] += n
	case "certificates":
		b.certs += n
	case "revoked":
		b.revoked += n
	case "expired":
		b.expired += n
	}
}

// Counts returns the counts.
func (b *CountsBuilder) Counts() acme.Counts {
	for state, n := range map[acme.CertState]int{
		acme.CertRevoked: b.revoked,
		acme.CertExpired: b.expired,
		acme.CertActive:  b.certs - b.revoked - b.expired,
	} {
		if n != 0 {
			b.c.Certificates[state] = n
		}
	}
	return b.c
}
