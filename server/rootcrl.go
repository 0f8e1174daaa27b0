// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/web"
)

// The root's CRL (ca/rootcrl.go): signed offline with the root's key
// (weir init signs the first, with a new root; weir ca sign-root-crl the
// next ones), served by weir as it is given, at /ca/root-crl.der on the
// plain-HTTP and the ACME listeners, which the intermediates weir makes
// name as their CRL distribution point.

// fileCARootCRL is the data directory's root CRL, served unless
// ca.root-crl-file names another.
const fileCARootCRL = "ca/root-crl.der"

// rootCRLWarnBefore is how long before its nextUpdate weir warns that
// the root CRL must be signed anew: a month, for the offline ceremony.
const rootCRLWarnBefore = 30 * 24 * time.Hour

// servedRootCRL is the root CRL weir serves, as read from its file.
type servedRootCRL struct {
	der    []byte
	rl     *x509.RevocationList
	path   string
	digest [sha256.Size]byte
}

// rootCRLURL is the URL of the root CRL that the intermediates weir makes
// name: /ca/root-crl.der at the artefacts' base (ArtefactURL).
func rootCRLURL(cfg Config) string { return web.RootCRLURL(ArtefactURL(cfg)) }

// rootCRLFile is the file of the root CRL weir serves: ca.root-crl-file
// (which must then exist), else the data directory's (served when it
// exists).
func rootCRLFile(cfg Config) (path string, required bool) {
	if cfg.CA.RootCRLFile != "" {
		return cfg.CA.RootCRLFile, true
	}
	return dataPath(cfg.DataDir, fileCARootCRL), false
}

// loadRootCRL reads the root CRL of cfg and checks it at now: the
// root's (its issuer and signature) and not past its nextUpdate, past
// which relying parties refuse it. Without one (no data directory file):
// nil.
func loadRootCRL(cfg Config, root *x509.Certificate, now time.Time) (*servedRootCRL, error) {
	path, required := rootCRLFile(cfg)
	der, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !required:
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("ca.root-crl-file: %w", err)
	case root == nil:
		return nil, fmt.Errorf("ca.root-crl-file: %s cannot be checked without the root: set ca.root-file", path)
	}
	rl, err := ca.ParseRootCRL(der, root)
	if err != nil {
		return nil, fmt.Errorf("ca.root-crl-file: %s: %w", path, err)
	}
	rc := &servedRootCRL{der: der, rl: rl, path: path, digest: sha256.Sum256(der)}
	if !now.Before(rl.NextUpdate) {
		return rc, fmt.Errorf("ca.root-crl-file: %s is %w (%s), so relying parties refuse it: sign the next one with weir ca sign-root-crl",
			path, errRootCRLStale, rl.NextUpdate.UTC().Format(time.RFC3339))
	}
	return rc, nil
}

// errRootCRLStale is loadRootCRL's refusal of a root CRL past its
// nextUpdate, which it returns with the CRL.
var errRootCRLStale = errors.New("past its nextUpdate")

// startRootCRL is loadRootCRL at start. A root CRL past its nextUpdate is
// served all the same, with an error in the log (and on /metrics, whose
// nextUpdate is then in the past): relying parties that check the root's
// CRL refuse the chains under the root until the next one is signed
// whether weir serves it or not, but a CA that refused to start over it
// would also stop issuing, and stop serving its intermediates' CRLs,
// which every other relying party needs. A reload or a file change to
// such a CRL is refused, and the one served stays.
func startRootCRL(log *slog.Logger, cfg Config, root *x509.Certificate, now time.Time) (*servedRootCRL, error) {
	rc, err := loadRootCRL(cfg, root, now)
	if errors.Is(err, errRootCRLStale) {
		log.Error("serving the root's CRL although it is past its nextUpdate: relying parties that check it refuse every chain under the root until the next one is signed (docs/operations.md, \"Revoking an intermediate\")",
			"err", err)
		return rc, nil
	}
	if err != nil {
		return nil, err
	}
	return rc, nil
}

// warnRootCRL warns when rc is within rootCRLWarnBefore of its
// nextUpdate.
func warnRootCRL(log *slog.Logger, rc *servedRootCRL, now time.Time) {
	if rc != nil && rc.rl.NextUpdate.Sub(now) < rootCRLWarnBefore {
		log.Warn("the root's CRL passes its nextUpdate soon, and relying parties then refuse every chain under the root: sign the next one with weir ca sign-root-crl (docs/operations.md, \"Revoking an intermediate\")",
			"file", rc.path, "next_update", rc.rl.NextUpdate.UTC().Format(time.RFC3339))
	}
}

// rootCRLDER is the root CRL to serve (web.Config.RootCRL); nil without.
func (s *Server) rootCRLDER() []byte {
	if rc := s.rootCRL.Load(); rc != nil {
		return rc.der
	}
	return nil
}

// rootCRLTimes are the served root CRL's thisUpdate and nextUpdate, for
// /metrics (admin.Metrics.WatchRootCRL).
func (s *Server) rootCRLTimes() (thisUpdate, nextUpdate time.Time, ok bool) {
	rc := s.rootCRL.Load()
	if rc == nil {
		return time.Time{}, time.Time{}, false
	}
	return rc.rl.ThisUpdate, rc.rl.NextUpdate, true
}

// useRootCRL serves rc from now on, and says so when it is a new one.
func (s *Server) useRootCRL(rc *servedRootCRL, trigger string) {
	old := s.rootCRL.Swap(rc)
	if rc != nil && (old == nil || old.digest != rc.digest) {
		s.log.Info("serving the root's CRL", "trigger", trigger, "file", rc.path, "number", rc.rl.Number,
			"revoked_intermediates", len(rc.rl.RevokedCertificateEntries), "next_update", rc.rl.NextUpdate.UTC().Format(time.RFC3339))
	}
	warnRootCRL(s.log, rc, time.Now())
}

// refreshRootCRL reads the root CRL's file again when its content
// differs from the one served (watchConfig polls it), and serves it if
// it passes loadRootCRL; a refused one is logged once, and the one served
// stays. refused is the digest of the last one refused.
func (s *Server) refreshRootCRL(refused *[sha256.Size]byte) {
	cfg := s.currentConfig()
	path, _ := rootCRLFile(cfg)
	d := fileDigest(path)
	if rc := s.rootCRL.Load(); d == ([sha256.Size]byte{}) || d == *refused || (rc != nil && d == rc.digest) {
		return
	}
	rc, err := loadRootCRL(cfg, s.caRoot(), time.Now())
	if err != nil {
		rc = nil
		*refused = d
		s.log.Error("the root's CRL was refused; the one served stays", "trigger", "file change", "file", path, "err", err)
		return
	}
	s.useRootCRL(rc, "file change")
}

// caRoot is the root the root CRL must be signed by: ca.intermediate's
// (every issuer chains to it).
func (s *Server) caRoot() *x509.Certificate { return s.caKey.Root }
