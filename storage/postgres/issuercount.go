// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"strings"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// certIDSerialPartSQL is acme.CertIDSerialPart of the serial in col, in
// SQL: the serial in weir's hex form (ca.SerialHex: lower case, even
// length, no leading zero octet) with a zero octet before a high bit set,
// in base64url without padding; NULL for a serial not in that form.
func certIDSerialPartSQL(col string) string {
	return strings.ReplaceAll(`CASE WHEN COL ~ '^(0[1-9a-f]|[1-9a-f][0-9a-f])([0-9a-f]{2})*$'
		THEN rtrim(translate(encode(decode(CASE WHEN left(COL, 1) IN ('8', '9', 'a', 'b', 'c', 'd', 'e', 'f') THEN '00' ELSE '' END || COL, 'hex'),
			'base64'), '+/', '-_'), '=') END`, "COL", col)
}

// certIDSerialSQL is acme.CertIDSerial of the ARI identifier in col, in
// SQL, for the identifiers orders store (CertID's form): the base64url
// after the "." decoded, in hex, without leading zero octets; NULL for
// text that is not base64url of at most 21 octets.
func certIDSerialSQL(col string) string {
	return strings.ReplaceAll(`CASE WHEN PART ~ '^[A-Za-z0-9_-]{2,28}$' AND length(PART) % 4 <> 1
		THEN regexp_replace(encode(decode(translate(PART, '-_', '+/') || repeat('=', (4 - length(PART) % 4) % 4), 'base64'), 'hex'), '^(00)+', '') END`,
		"PART", "split_part("+col+", '.', 2)")
}

// issuerCountQuery is sqlrow.IssuerCountSQL with the expressions above,
// with an array of the shards, which PostgreSQL seeks one by one in the
// index (where an IN of the CTE reads the issuer's whole range, expired
// certificates too).
var issuerCountQuery = sqlrow.IssuerCountSQL(sqlrow.IssuerCountDialect{
	SerialPart:     certIDSerialPartSQL,
	ReplacedSerial: certIDSerialSQL,
	ShardIn:        "c.crl_shard = ANY (ARRAY(SELECT k FROM shards WHERE k IS NOT NULL))",
})

var _ acme.IssuerCounter = (*Store)(nil)

// IssuerCounts implements acme.IssuerCounter: one statement per issuer.
func (s *Store) IssuerCounts(ctx context.Context, q acme.IssuerCountQuery) ([]acme.IssuerCount, error) {
	if err := sqlrow.CheckIssuerCountQuery(drv, q); err != nil {
		return nil, err
	}
	out := make([]acme.IssuerCount, 0, len(q.Issuers))
	for _, is := range q.Issuers {
		c, err := sqlrow.ScanIssuerCount(s.pool.QueryRow(ctx, issuerCountQuery, sqlrow.IssuerCountArgs(q, is)...), is.ID)
		if err != nil {
			return nil, drv.Wrap("issuer counts of "+is.ID, err)
		}
		out = append(out, c)
	}
	return out, nil
}
