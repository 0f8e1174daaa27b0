// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql/driver"
	"strings"

	"modernc.org/sqlite"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// SQLite has no base64, which the ARI identifiers of the issuer counts
// need (sqlrow.IssuerCountSQL): two functions of the driver, registered
// for every connection it opens, make them with acme's own code. They
// appear in queries only, never in the schema, so that the file stays
// readable and writable by any SQLite.
const (
	// fnCertIDSerialPart(serial) is acme.CertIDSerialPart.
	fnCertIDSerialPart = "weir_certid_serial_part"
	// fnCertIDSerial(certID) is acme.CertIDSerial.
	fnCertIDSerial = "weir_certid_serial"
)

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(fnCertIDSerialPart, 1, textFunc(acme.CertIDSerialPart))
	sqlite.MustRegisterDeterministicScalarFunction(fnCertIDSerial, 1, textFunc(acme.CertIDSerial))
}

// textFunc is a SQL function of one text argument made of f: NULL when
// the argument is not text or f refuses it.
func textFunc(f func(string) (string, bool)) func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
	return func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		s, ok := args[0].(string)
		if !ok {
			return nil, nil
		}
		if out, ok := f(s); ok {
			return out, nil
		}
		return nil, nil
	}
}

// issuerCountQuery is sqlrow.IssuerCountSQL with the functions above, in
// SQLite's numbered parameters, with an IN list of the shards, which
// SQLite seeks one by one (TestIssuerCountPlan).
var issuerCountQuery = strings.ReplaceAll(sqlrow.IssuerCountSQL(sqlrow.IssuerCountDialect{
	SerialPart:     func(col string) string { return fnCertIDSerialPart + "(" + col + ")" },
	ReplacedSerial: func(col string) string { return fnCertIDSerial + "(" + col + ")" },
	ShardIn:        "c.crl_shard IN (SELECT k FROM shards)",
}), "$", "?")

var _ acme.IssuerCounter = (*Store)(nil)

// IssuerCounts implements acme.IssuerCounter: one statement per issuer on
// a reader.
func (s *Store) IssuerCounts(ctx context.Context, q acme.IssuerCountQuery) ([]acme.IssuerCount, error) {
	if err := sqlrow.CheckIssuerCountQuery(drv, q); err != nil {
		return nil, err
	}
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]acme.IssuerCount, 0, len(q.Issuers))
	for _, is := range q.Issuers {
		c, err := sqlrow.ScanIssuerCount(s.r.QueryRowContext(ctx, issuerCountQuery, sqlrow.IssuerCountArgs(q, is)...), is.ID)
		if err != nil {
			return nil, drv.Wrap("issuer counts of "+is.ID, err)
		}
		out = append(out, c)
	}
	return out, nil
}
