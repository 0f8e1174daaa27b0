// SPDX-License-Identifier: Apache-2.0

package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/storage/transfer"
)

// The shape of a populated store: one account per certsPerAccount
// certificates, one revoked certificate in revokedEvery, and each
// certificate's order with one authorization of three challenges, as
// weir's new-order makes them.
const (
	certsPerAccount = 50
	revokedEvery    = 20 // 5 %
)

// popChunk is the rows of one batch of certificates, with their orders,
// authorizations and challenges.
type popChunk struct {
	authzs     []transfer.Authz
	challenges []transfer.Challenge
	orders     []transfer.Order
	certs      []transfer.Certificate
	entries    []transfer.LogEntry // the log's, with -log
}

// popGen makes the rows of a populated store. Its fields are read only
// once made, so certRows may run on several goroutines.
type popGen struct {
	issuer   *ca.CA
	n        int       // certificates
	accounts int       // accounts
	start    time.Time // the first certificate's issue time
	span     time.Duration
	lifetime time.Duration
	shards   int                 // CRL shards (ca.CRLShard); 0: shard 0
	log      bool                // -log: each certificate's log entry too
	leafKeys []*ecdsa.PrivateKey // a small pool: signing, not key generation, is what a certificate costs
}

// sortedIDs is weir's alphabet for object IDs (acme/service.go newID):
// lower-case Crockford base32, whose encodings sort as their bytes do.
var sortedIDs = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// objectID is an ID of weir's form made at t: 48 bits of milliseconds,
// then 80 random bits.
func objectID(t time.Time) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	_, _ = rand.Read(b[6:])
	return sortedIDs.EncodeToString(b[:])
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// accountRow is account id (1-based), with a P-256 key of its own stored
// as weir stores a JWK, and its RFC 7638 thumbprint.
func (g *popGen) accountRow(id int64) (transfer.Account, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return transfer.Account{}, err
	}
	raw, err := k.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		return transfer.Account{}, err
	}
	b64 := base64.RawURLEncoding.EncodeToString
	jwk := fmt.Sprintf(`{"crv":"P-256","kty":"EC","x":%q,"y":%q}`, b64(raw[1:33]), b64(raw[33:]))
	sum := sha256.Sum256([]byte(jwk))
	created := g.start.Add(-time.Hour).Add(time.Duration(id) * time.Millisecond)
	return transfer.Account{
		ID: id, KeyThumbprint: b64(sum[:]), JWK: []byte(jwk), Contact: "[]",
		Status: string(acme.StatusValid), CreatedAt: created.UnixNano(), CreatedIP: "127.0.0.1",
	}, nil
}

// names are certificate i's names: one or two under its account's domain.
func (g *popGen) names(i int, account int64) []string {
	domain := fmt.Sprintf("team%d.scale.test", account)
	host := fmt.Sprintf("svc%d.%s", i, domain)
	if i%4 == 0 {
		return []string{host, "www." + host}
	}
	return []string{host}
}

// certRows makes the rows of certificates [from, to) into c.
func (g *popGen) certRows(c *popChunk, from, to int) error {
	for i := from; i < to; i++ {
		account := int64(i%g.accounts) + 1
		issued := g.start.Add(time.Duration(int64(g.span) / int64(g.n) * int64(i)))
		created := issued.Add(-2 * time.Second)
		names := g.names(i, account)
		key := g.leafKeys[i%len(g.leafKeys)]
		out, err := g.issuer.Issue(ca.IssueRequest{
			PublicKey: &key.PublicKey, DNSNames: names,
			NotBefore: issued.Truncate(time.Second), NotAfter: issued.Truncate(time.Second).Add(g.lifetime),
		})
		if err != nil {
			return fmt.Errorf("certificate %d: %w", i, err)
		}
		orderID := objectID(created)
		var idents []acme.Identifier
		var authzIDs []string
		// How each name was validated, as an issuance records it: by
		// http-01, the authorization's first challenge.
		var validations []acme.NameValidation
		for _, name := range names {
			authzID := objectID(created)
			authzIDs = append(authzIDs, authzID)
			idents = append(idents, acme.Identifier{Type: acme.IdentifierDNS, Value: name})
			c.authzs = append(c.authzs, transfer.Authz{
				ID: authzID, AccountID: account, IdentType: string(acme.IdentifierDNS), IdentValue: name,
				Status: string(acme.StatusValid), Expires: created.Add(30 * 24 * time.Hour).UnixNano(), CreatedAt: created.UnixNano(),
			})
			for pos, typ := range []acme.ChallengeType{acme.ChallengeHTTP01, acme.ChallengeDNS01, acme.ChallengeTLSALPN01} {
				ch := transfer.Challenge{ID: objectID(created), AuthzID: authzID, Position: int64(pos), Type: string(typ),
					Token: randomToken(), Status: string(acme.StatusPending), UpdatedAt: created.UnixNano()}
				if pos == 0 {
					ch.Status, ch.Validated = string(acme.StatusValid), created.Add(time.Second).UnixNano()
					ch.UpdatedAt = ch.Validated
					validations = append(validations, acme.NameValidation{Name: name, Method: string(typ), AuthzID: acme.AuthzID(authzID),
						ValidatedAt: time.Unix(0, ch.Validated).UTC()})
				}
				c.challenges = append(c.challenges, ch)
			}
		}
		identsJSON, _ := json.Marshal(idents)
		authzJSON, _ := json.Marshal(authzIDs)
		namesJSON, _ := json.Marshal(names)
		validationsJSON, _ := json.Marshal(validations)
		validationsText := string(validationsJSON)
		serial := ca.SerialHex(out.Cert.SerialNumber)
		c.orders = append(c.orders, transfer.Order{
			Seq: int64(i) + 1, ID: orderID, AccountID: account, Status: string(acme.StatusValid),
			Identifiers: string(identsJSON), AuthzIDs: string(authzJSON),
			Expires: created.Add(7 * 24 * time.Hour).UnixNano(), CertSerial: serial, CreatedAt: created.UnixNano(),
		})
		nb, na := out.Cert.NotBefore, out.Cert.NotAfter
		life := na.Sub(nb)
		rs := nb.Add(life * 2 / 3).Add(time.Duration(i%3600) * time.Second)
		cert := transfer.Certificate{
			Serial: serial, AccountID: account, OrderID: orderID, DER: out.DER, ChainPEM: g.issuer.ChainPEM(out.DER),
			Names: string(namesJSON), NameSet: strings.Join(names, ","),
			NotBefore: nb.UnixNano(), NotAfter: na.UnixNano(), IssuedAt: issued.UnixNano(),
			RenewalStart: rs.UnixNano(), RenewalEnd: rs.Add(life / 10).UnixNano(),
			CRLShard:    int64(ca.CRLShard(out.Cert.SerialNumber, g.shards)),
			Validations: &validationsText,
		}
		if i%revokedEvery == revokedEvery-1 {
			at := issued.Add(time.Hour).UnixNano()
			cert.RevokedAt, cert.Reason = &at, int64([]int{0, 1, 4, 5}[i/revokedEvery%4])
		}
		c.certs = append(c.certs, cert)
		if g.log {
			e, err := logEntry(i, account, orderID, serial, out.DER, names, issued)
			if err != nil {
				return err
			}
			c.entries = append(c.entries, e)
		}
	}
	return nil
}
