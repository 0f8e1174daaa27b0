// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto/x509"
	"errors"
	"fmt"
	"time"
)

// CA signs leaf certificates and CRLs with the intermediate of a Hierarchy.
// It is safe for concurrent use.
type CA struct {
	cfg Config
	h   Hierarchy
	// key is h.IntermediateKey behind a guard, so that a failure of the
	// key itself is told apart (ErrSignerUnavailable) from a refused
	// request.
	key    Signer
	intPEM []byte
	now    func() time.Time
}

// New returns a CA that issues under h according to cfg. The configuration
// must be valid, and h must hold an intermediate certificate and its private
// key (see LoadHierarchy). If cfg.CRLURL is set, the intermediate must also
// be allowed to sign CRLs. A nil now means time.Now.
func New(cfg Config, h *Hierarchy, now func() time.Time) (*CA, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("ca: invalid config: %w", err)
	}
	if h == nil {
		return nil, errors.New("ca: hierarchy is nil")
	}
	if err := checkIntermediate(h.Intermediate, h.IntermediateKey); err != nil {
		return nil, err
	}
	if cfg.CRLURL != "" && h.Intermediate.KeyUsage&x509.KeyUsageCRLSign == 0 {
		return nil, fmt.Errorf("ca: CRL URL is set but intermediate %q lacks the cRLSign key usage",
			h.Intermediate.Subject)
	}
	if now == nil {
		now = time.Now
	}
	return &CA{
		cfg:    cfg,
		h:      *h,
		key:    WrapSigner("intermediate", h.IntermediateKey),
		intPEM: EncodeCertPEM(h.Intermediate.Raw),
		now:    now,
	}, nil
}

// Hierarchy returns a copy of the CA's hierarchy. The certificates and keys
// it points to are shared and must not be modified.
func (c *CA) Hierarchy() *Hierarchy {
	h := c.h
	return &h
}

// Config returns the CA's configuration.
func (c *CA) Config() Config {
	return c.cfg
}

// ChainPEM returns the PEM chain served to ACME clients: the leaf followed
// by the intermediate, as "CERTIFICATE" blocks. The root is not included.
func (c *CA) ChainPEM(leafDER []byte) []byte {
	leaf := EncodeCertPEM(leafDER)
	out := make([]byte, 0, len(leaf)+len(c.intPEM))
	out = append(out, leaf...)
	return append(out, c.intPEM...)
}
