// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"encoding/base64"
	"math/big"
	"time"

	"github.com/weir-pki/weir/ca"
)

// IssuerCounter is the store role of the issuer-migration view
// (migration.go): what each issuer's certificates are doing at a time,
// counted by the store. It is not part of Store, so that wrappers of
// Store need not implement it; storage/sqlite and storage/postgres do,
// and storage/storagetest checks them.
type IssuerCounter interface {
	// IssuerCounts returns one IssuerCount for each of q.Issuers, in
	// their order.
	IssuerCounts(ctx context.Context, q IssuerCountQuery) ([]IssuerCount, error)
}

// IssuerCountQuery is what IssuerCounts counts.
type IssuerCountQuery struct {
	// Now is the time a certificate is live at (not revoked, NotAfter
	// after Now) and its window ended at.
	Now time.Time
	// Since starts the recent interval, [Since, …), of Issued and
	// RenewedOff.
	Since time.Time
	// Issuers are the issuers counted.
	Issuers []IssuerKey
}

// IssuerKey names an issuer to IssuerCounts.
type IssuerKey struct {
	// ID is Certificate.Issuer's.
	ID string
	// KeyID is the subject key identifier of its intermediate, which its
	// certificates carry as their authority key identifier and which
	// begins their ARI identifiers (CertID): the store finds each
	// certificate's replacement by its identifier (Order.Replaces).
	KeyID []byte
}

// IssuerCount is what the certificates of one issuer are doing.
type IssuerCount struct {
	Issuer string
	// Live counts its certificates not revoked whose NotAfter is after
	// Now.
	Live int64
	// FirstExpiry and LastExpiry are the earliest and latest NotAfter of
	// the live ones; zero when there are none.
	FirstExpiry, LastExpiry time.Time
	// Replaced counts the live ones that a valid order replaced
	// (ReplacingOrder finds one for their identifier): renewed already.
	Replaced int64
	// Overdue counts the live ones not replaced whose stored renewal
	// window (RenewalEnd, set at issuance and moved by renew-now) ended
	// at or before Now; a certificate stored without a window is not
	// counted.
	Overdue int64
	// Issued counts the certificates it issued at or after Since,
	// revoked or not.
	Issued int64
	// RenewedOff counts its live certificates replaced by a certificate
	// of another issuer issued at or after Since: the holders that moved
	// off it in the interval.
	RenewedOff int64
}

// CertIDPrefix is the part of the ARI identifier (CertID) of every
// certificate of an intermediate whose subject key identifier is keyID:
// its base64url and the ".".
func CertIDPrefix(keyID []byte) string {
	return base64.RawURLEncoding.EncodeToString(keyID) + "."
}

// CertIDSerialPart is the rest of the ARI identifier of the certificate
// whose serial is serial: the base64url of the content octets of its DER
// INTEGER. ok is false for a serial that is not in weir's form
// (ca.SerialHex of a positive number), as the stores keep it.
func CertIDSerialPart(serial string) (part string, ok bool) {
	n, ok := new(big.Int).SetString(serial, 16)
	if !ok || n.Sign() <= 0 || ca.SerialHex(n) != serial {
		return "", false
	}
	return base64.RawURLEncoding.EncodeToString(serialOctets(n)), true
}

// CertIDSerial is the serial, in weir's hex form, of the certificate an
// ARI identifier names, in any form RenewalInfo accepts; ok is false for
// one that is malformed.
func CertIDSerial(id string) (serial string, ok bool) {
	_, serial, p := parseCertID(id)
	return serial, p == nil
}
