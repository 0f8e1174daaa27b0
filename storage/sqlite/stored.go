// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// The objects a write has just inserted, built as a read of them returns
// them, for the object cache (cache.go), so that the writer does not read
// back what it has just written: from the values bound to the INSERT, with
// the JSON columns decoded again (the very strings stored), times as
// sqlrow.FromNanos makes them, byte columns as database/sql scans them, and the
// columns the INSERT leaves to their defaults at those defaults. Every
// field a scan sets is set here and no other. TestStoredAsRead and
// TestCacheFollowsWrites compare them with reads, field for field.

// storedTime returns t as a read of it returns it.
func storedTime(t time.Time) time.Time {
	return sqlrow.FromNanos(sqlrow.ToNanos(t))
}

// storedBytes returns b as a read of the BLOB column it was bound to
// returns it: a copy, and nil when empty (TestStoredAsRead).
func storedBytes(b []byte) []byte { return append([]byte(nil), b...) }

// storedOrder is sqlrow.ScanOrder's result for the row CreateOrder
// inserts from r. csr is left NULL by the insert.
func storedOrder(r *sqlrow.OrderRow) (*acme.Order, error) {
	o := r.Order
	s := &acme.Order{
		ID: o.ID, AccountID: sqlrow.FormatAccountID(r.AccountID), Status: o.Status,
		NotBefore: storedTime(o.NotBefore), NotAfter: storedTime(o.NotAfter),
		Expires: storedTime(o.Expires), CertSerial: o.CertSerial, CreatedAt: storedTime(o.CreatedAt),
		Replaces: o.Replaces, Profile: o.Profile,
	}
	if err := sqlrow.DecodeOrderJSON(s, r.Identifiers, r.AuthzIDs, r.Error); err != nil {
		return nil, err
	}
	return s, nil
}

// storedAuthz is sqlrow.ScanAuthzRows's result for the rows insertAuthz
// inserts from r.
func storedAuthz(r *sqlrow.AuthzRow) (*acme.Authorization, error) {
	a := r.Authz
	s := &acme.Authorization{
		ID: a.ID, AccountID: sqlrow.FormatAccountID(r.AccountID), Identifier: a.Identifier,
		Wildcard: a.Wildcard, Status: a.Status, Expires: storedTime(a.Expires), CreatedAt: storedTime(a.CreatedAt),
	}
	for i, c := range a.Challenges {
		sc := &acme.Challenge{
			ID: c.ID, AuthzID: a.ID, Type: c.Type, Token: c.Token, Status: c.Status,
			Validated: storedTime(c.Validated), UpdatedAt: storedTime(c.UpdatedAt),
		}
		var err error
		if sc.Error, err = sqlrow.FromNullableJSON[acme.Problem](fmt.Sprintf("challenge %q error", c.ID), r.Errors[i]); err != nil {
			return nil, err
		}
		s.Challenges = append(s.Challenges, sc)
	}
	return s, nil
}

// storedCert is scanCert's result for the row FinalizeOrder inserts from
// r: not revoked, reason 0, renew_now at its default (false).
func storedCert(r *sqlrow.CertRow) (*acme.Certificate, error) {
	c := r.Cert
	s := &acme.Certificate{
		Serial: c.Serial, AccountID: sqlrow.FormatAccountID(r.AccountID), OrderID: c.OrderID,
		DER: storedBytes(c.DER), ChainPEM: storedBytes(c.ChainPEM),
		NotBefore: storedTime(c.NotBefore), NotAfter: storedTime(c.NotAfter), IssuedAt: storedTime(c.IssuedAt),
		Profile: c.Profile, RenewalStart: storedTime(c.RenewalStart), RenewalEnd: storedTime(c.RenewalEnd),
		Issuer: r.Issuer, CRLShard: c.CRLShard,
	}
	var err error
	if s.Names, err = sqlrow.StringsFromJSON(fmt.Sprintf("certificate %q names", c.Serial), r.Names); err != nil {
		return nil, err
	}
	if s.Validations, err = sqlrow.ValidationsFromJSON(c.Serial, r.Validations); err != nil {
		return nil, err
	}
	return s, nil
}
