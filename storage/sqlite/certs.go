// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// certCols are the columns scanCert reads, in order, from certificates:
// those of sqlrow.CertCols, then the issuer chain the row names
// (migration 0010).
const certCols = sqlrow.CertCols + `,
	(SELECT pem FROM issuer_chains WHERE issuer_chains.id = certificates.issuer_chain)`

// scanCert reads one row of certCols: a certificate stored with its
// issuer chain named gets its served chain back (joinChain).
func scanCert(row sqlrow.Scanner) (*acme.Certificate, error) {
	var issuerChain []byte
	c, err := sqlrow.ScanCertAnd(row, &issuerChain)
	if err != nil {
		return nil, err
	}
	if c.ChainPEM == nil && issuerChain != nil {
		c.ChainPEM = joinChain(c.DER, issuerChain)
	}
	return c, nil
}

// FinalizeOrder stores cert and moves order cert.OrderID from processing to
// valid with CertSerial set to cert.Serial, in one transaction that is on
// stable storage when FinalizeOrder returns. The error wraps
// acme.ErrConflict, and nothing is stored, if the order is not processing
// or the serial is taken.
func (s *Store) FinalizeOrder(ctx context.Context, cert *acme.Certificate) error {
	row, err := sqlrow.NewCertRow(drv, cert)
	if err != nil {
		return err
	}
	what := row.What
	// Its client downloads it next: cache it as a read returns it, built
	// from what is inserted (stored.go); if that cannot be built, it is not
	// cached, and the reads after the commit go to the database.
	cached, cacheErr := storedCert(row)
	chain, issuer, split := cert.ChainPEM, []byte(nil), false
	if issuer, split = splitChain(cert.DER, cert.ChainPEM); split {
		chain = nil
	}
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wFinalizeOrder,
			string(acme.StatusValid), cert.Serial, cert.OrderID, string(acme.StatusProcessing))
		if err != nil {
			// orders_replaces_valid: another order already replaced the
			// certificate this one replaces.
			return writeErr(what, err)
		}
		if err := checkAffected(w, res, what, "order is not processing", wOrderExists, cert.OrderID); err != nil {
			return err
		}
		var issuerID any // NULL unless the chain was split
		if split {
			id, err := w.issuerChainID(issuer)
			if err != nil {
				return drv.Wrap(what, err)
			}
			issuerID = id
		}
		_, err = w.exec(wInsertCertificate, row.Values(chain, issuerID)...)
		if err != nil {
			return writeErr(what, err)
		}
		for _, k := range sqlrow.SearchKeys(cert.Names) {
			if _, err := w.exec(wInsertCertSearch, k, cert.Serial); err != nil {
				return drv.Wrap(what, err)
			}
		}
		if cert.LogEntry != nil {
			if err := insertLogEntry(w, cert.LogEntry, cert.Serial); err != nil {
				return writeErr(what, err)
			}
		}
		w.edit(editFinalizeOrder(cert.OrderID, cert.Serial))
		if cacheErr == nil {
			w.edit(editPutCert(cached))
		}
		return nil
	})
}

// GetCertificate returns the certificate with the given serial, from the
// cache (cache.go) if it was issued lately, or else read.
func (s *Store) GetCertificate(ctx context.Context, serial string) (*acme.Certificate, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	if c := s.cache.cert(serial); c != nil {
		return c, nil
	}
	c, err := scanCert(s.queryRow(ctx, rGetCertificate, serial))
	if err != nil {
		return nil, drv.RowErr(fmt.Sprintf("certificate %q", serial), err)
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
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wRevokeCertificate, sqlrow.ToNanos(at), reason, serial)
		if err != nil {
			return drv.Wrap(what, err)
		}
		if err := checkAffected(w, res, what, "already revoked", wCertificateExists, serial); err != nil {
			return err
		}
		if err := recordRemoval(w, wPlanRemovalRevoked, serial, at); err != nil {
			return drv.Wrap(what, err)
		}
		if logEntry != nil {
			if err := insertLogEntry(w, logEntry, ""); err != nil {
				return writeErr(what, err)
			}
		}
		w.edit(editDropCert(serial))
		return nil
	})
}

// ListRevoked returns the revocations of the certificates that have not
// expired at now (NotAfter is not before now), from the covering index
// certificates_revoked (TestQueryPlans).
func (s *Store) ListRevoked(ctx context.Context, now time.Time) ([]acme.Revocation, error) {
	if err := drv.CheckTimes("list revoked certificates", now); err != nil {
		return nil, err
	}
	rows, err := s.query(ctx, rListRevoked, sqlrow.ToNanos(now))
	if err != nil {
		return nil, drv.Errorf("list revoked certificates: %w", err)
	}
	defer rows.Close()
	return sqlrow.Collect(drv, "list revoked certificates", rows, sqlrow.ScanRevocation)
}

// splitChain returns the issuer chain of chainPEM, the served chain of
// the certificate der, if chainPEM is the PEM encoding of der followed by
// a non-empty rest (the form ca.CA.ChainPEM gives), so that
// joinChain(der, issuer) is chainPEM again, byte for byte. Otherwise ok
// is false, and the row keeps chainPEM whole.
func splitChain(der, chainPEM []byte) (issuer []byte, ok bool) {
	if len(der) == 0 {
		return nil, false
	}
	leaf := leafPEM(der)
	if len(chainPEM) <= len(leaf) || !bytes.HasPrefix(chainPEM, leaf) {
		return nil, false
	}
	return chainPEM[len(leaf):], true
}

// joinChain rebuilds the served chain of a certificate stored with its
// issuer chain named (splitChain).
func joinChain(der, issuer []byte) []byte {
	return append(leafPEM(der), issuer...)
}

// leafPEM is the first block of a served chain: der as one CERTIFICATE
// block, as ca.EncodeCertPEM writes it.
func leafPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// issuerChainID returns the ID of issuer in issuer_chains, inserting it
// if it is new: once per intermediate. The ID is remembered once the
// transaction commits (objCache.chains), so later certificates of the same
// intermediate run neither statement.
func (w *writeTx) issuerChainID(issuer []byte) (int64, error) {
	if id, ok := w.s.cache.chainID(issuer); ok {
		return id, nil
	}
	if _, err := w.exec(wInsertIssuerChain, issuer); err != nil {
		return 0, fmt.Errorf("storing issuer chain: %w", err)
	}
	var id int64
	if err := w.queryRow(wIssuerChainID, issuer).Scan(&id); err != nil {
		return 0, fmt.Errorf("reading issuer chain: %w", err)
	}
	w.edit(editChainID(issuer, id))
	return id, nil
}
