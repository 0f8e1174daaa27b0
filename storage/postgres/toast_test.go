// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestCertificateRowInline: a certificate of the usual size (its DER and
// a chain of two PEM blocks, some 2.6 kB, over PostgreSQL's default
// TOAST target) stays in its row (0021): nothing goes to the TOAST
// table, and it reads back whole.
func TestCertificateRowInline(t *testing.T) {
	s := openFresh(t)
	ctx := t.Context()
	a, _ := seed(t, s)
	o := &acme.Order{ID: "order-inline", AccountID: a.ID, Status: acme.StatusProcessing,
		Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "inline.example.com"}},
		Expires:     fixedNow().Add(time.Hour), CreatedAt: fixedNow()}
	if err := s.CreateOrder(ctx, o, nil); err != nil {
		t.Fatal(err)
	}
	// Random bytes, as DER and its base64 are to pglz, which cannot
	// shrink them.
	rng := rand.New(rand.NewPCG(1, 2))
	der := make([]byte, 560)
	for i := range der {
		der[i] = byte(rng.Uint32())
	}
	raw := make([]byte, 1250)
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	pem := []byte(base64.StdEncoding.EncodeToString(raw))
	c := &acme.Certificate{Serial: "0a0b0c", AccountID: a.ID, OrderID: o.ID, DER: der, ChainPEM: pem,
		Names: []string{"inline.example.com"}, NotBefore: fixedNow(), NotAfter: fixedNow().Add(time.Hour), IssuedAt: fixedNow()}
	if err := s.FinalizeOrder(ctx, c); err != nil {
		t.Fatal(err)
	}
	var toast int64
	if err := s.pool.QueryRow(ctx, `SELECT pg_relation_size(reltoastrelid) FROM pg_class
		WHERE oid = 'certificates'::regclass`).Scan(&toast); err != nil {
		t.Fatal(err)
	}
	if toast != 0 {
		t.Errorf("the certificates' TOAST table holds %d bytes after %d-byte certificates, want 0", toast, len(der)+len(pem))
	}
	got, err := s.GetCertificate(ctx, c.Serial)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.DER, der) || !bytes.Equal(got.ChainPEM, pem) {
		t.Errorf("GetCertificate: DER %d bytes, chain %d bytes; want %d and %d, equal", len(got.DER), len(got.ChainPEM), len(der), len(pem))
	}
}
