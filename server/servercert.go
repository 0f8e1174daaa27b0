// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"sync/atomic"
	"time"
)

// servingCert is the certificate the ACME and admin listeners serve. When
// weir issues it from its own CA (no server.tls), it is renewed while
// weir runs, once a third of its life is left: the first TLS handshake
// after that starts the renewal (serverCertificate, which writes the new
// files) and is served the current certificate, still valid; the
// handshakes after it get the new one. Without this a weir that runs
// longer than two thirds of its CA's certificate lifetime (90 days by
// default; 10 minutes in the fleet drill, which found it) serves an
// expired certificate until it restarts.
type servingCert struct {
	cur      atomic.Pointer[tls.Certificate]
	renewing atomic.Bool
	// renew issues or reuses the certificate at now; nil when the
	// certificate is the operator's (server.tls), which weir never renews.
	renew func(now time.Time) (tls.Certificate, error)
	now   func() time.Time
	log   *slog.Logger
}

func newServingCert(c tls.Certificate, renew func(time.Time) (tls.Certificate, error), now func() time.Time, log *slog.Logger) *servingCert {
	s := &servingCert{renew: renew, now: now, log: log}
	s.cur.Store(&c)
	return s
}

// certDue reports whether c has a third of its life or less left at now.
func certDue(c *tls.Certificate, now time.Time) bool {
	if c == nil || c.Leaf == nil {
		return false
	}
	return c.Leaf.NotAfter.Sub(now) <= c.Leaf.NotAfter.Sub(c.Leaf.NotBefore)/3
}

// get is the listeners' tls.Config.GetCertificate.
func (s *servingCert) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c := s.cur.Load()
	if s.renew != nil && certDue(c, s.now()) && s.renewing.CompareAndSwap(false, true) {
		go s.renewNow()
	}
	return c, nil
}

// renewNow renews the certificate; a failure is logged and the next
// handshake tries again.
func (s *servingCert) renewNow() {
	defer s.renewing.Store(false)
	c, err := s.renew(s.now())
	if err != nil {
		s.log.Error("renewing weir's own HTTPS certificate failed; serving the current one, the next connection tries again",
			"err", err, "not_after", s.cur.Load().Leaf.NotAfter)
		return
	}
	s.cur.Store(&c)
	s.log.Info("renewed weir's own HTTPS certificate", "not_after", c.Leaf.NotAfter)
}

// leaf is the certificate served now. Its names are those of the one
// served at start: a renewal keeps them.
func (s *servingCert) leaf() *x509.Certificate { return s.cur.Load().Leaf }

// tlsConfig is a listener's TLS configuration serving the certificate.
func (s *servingCert) tlsConfig(nextProtos ...string) *tls.Config {
	return &tls.Config{GetCertificate: s.get, MinVersion: tls.VersionTLS12, NextProtos: nextProtos}
}
