// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
)

// initFile is one file init makes or finds in the data directory.
type initFile struct {
	name, what string
	outcome    string // created, kept or replaced
	secret     bool
}

// InitReport says what InitDataDir did in the data directory.
type InitReport struct {
	dataDir string
	files   []initFile
	rootFP  string
	// rootKeyOut is where the root key was written, outside the data
	// directory.
	rootKeyOut string
}

// InitOptions are the choices of weir init beyond the configuration.
type InitOptions struct {
	// RootKeyOut, when set, is where a new root's key is written instead
	// of the data directory: a path outside it (an offline medium), so
	// that serve never holds it. A root that exists already is kept.
	RootKeyOut string
}

// InitDataDir makes the data directory of cfg ready to serve, as weir
// init does: the CA, the HTTPS certificate and the admin token, reusing
// whatever is there. It creates no database: that is New's job.
func InitDataDir(cfg Config, now time.Time, opts InitOptions) (*InitReport, error) {
	dd, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	cfg.DataDir = dd
	if opts.RootKeyOut, err = offlineRootPath(cfg, opts.RootKeyOut); err != nil {
		return nil, err
	}
	files := []initFile{
		{name: fileRootPEM, what: "the root certificate to distribute"},
		{name: fileCARoot, what: "the root CA"},
		{name: fileCARootKey, what: "the root CA's key", secret: true},
		{name: fileCAIntermediate, what: "the issuing intermediate CA"},
		{name: fileCAIntKey, what: "the intermediate's key", secret: true},
		{name: fileCARootCRL, what: "the root's CRL (weir ca sign-root-crl)"},
		{name: fileTLSCert, what: "weir's HTTPS certificate"},
		{name: fileTLSKey, what: "its key", secret: true},
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = dataPath(dd, f.name)
	}
	if adminTokenWanted(cfg) {
		files = append(files, initFile{name: cfg.Admin.TokenFile, what: "the admin listener's bearer token", secret: true})
		paths = append(paths, adminTokenPath(cfg))
	}
	before := make([][]byte, len(paths))
	for i, p := range paths {
		before[i], _ = os.ReadFile(p)
	}

	if err := os.MkdirAll(dd, 0o700); err != nil {
		return nil, fmt.Errorf("data-dir: %w", err)
	}
	h, _, err := loadOrCreateHierarchy(cfg, now, opts.RootKeyOut)
	if err != nil {
		return nil, fmt.Errorf("ca: %w", err)
	}
	defer closeKey(h)
	issuer, err := newIssuer(cfg, h)
	if err != nil {
		return nil, err
	}
	if _, err := serverCertificate(cfg, issuer, now); err != nil {
		return nil, fmt.Errorf("server.tls: %w", err)
	}
	if _, err := loadOrCreateAdminToken(cfg); err != nil {
		return nil, err
	}

	rep := &InitReport{dataDir: dd}
	if h.Root != nil {
		rep.rootFP = fingerprint(h.Root)
	}
	if opts.RootKeyOut != "" && exists(opts.RootKeyOut) {
		rep.rootKeyOut = opts.RootKeyOut
	}
	for i, f := range files {
		after, err := os.ReadFile(paths[i])
		switch {
		case err != nil:
			continue // not ours to make: a configured intermediate, say
		case before[i] == nil:
			f.outcome = "created"
		case bytes.Equal(before[i], after):
			f.outcome = "kept"
		default:
			f.outcome = "replaced"
		}
		rep.files = append(rep.files, f)
	}
	return rep, nil
}

// Print lists the data directory's files, each created, kept or
// replaced, and the root's fingerprint.
func (r *InitReport) Print(w io.Writer) {
	fmt.Fprintf(w, "data directory %s:\n", r.dataDir)
	for _, f := range r.files {
		what := f.what
		if f.secret {
			what += " (mode 0600)"
		}
		fmt.Fprintf(w, "  %-8s %-26s %s\n", f.outcome, f.name, what)
	}
	if r.rootKeyOut != "" {
		fmt.Fprintf(w, "\nthe root CA's key is at %s, outside the data directory: keep it offline;\n"+
			"weir serve never needs it (weir ca sign-intermediate uses it).\n", r.rootKeyOut)
	}
	if r.rootFP != "" {
		fmt.Fprintf(w, "\nroot CA SHA-256: %s\n", r.rootFP)
	}
}

// WriteConfigFile writes text, a configuration file (ConfigText), to path
// atomically with mode 0644, creating its directory with mode 0755: the
// file and its directory are readable by all, like /etc/weir, because the
// service may run as another user than the one that writes it.
func WriteConfigFile(path string, text []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := writeFileAtomic(path, text, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// externalURL is the base URL clients use: server.external-url, or
// https://<server.listen>.
func externalURL(cfg Config) string {
	if cfg.Server.ExternalURL != "" {
		return cfg.Server.ExternalURL
	}
	return "https://" + cfg.Server.Listen
}

// newIssuer is the CA that signs with h, as weir serve makes it.
func newIssuer(cfg Config, h *ca.Hierarchy) (*ca.CA, error) {
	return newIssuerCA(cfg, acme.DefaultIssuer, cfg.CA.Intermediate, h, 0)
}
