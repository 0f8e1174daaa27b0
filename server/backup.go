// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/weir-pki/weir/storage/sqlite"
)

// Backup copies the data directory of cfg to out, a new or empty
// directory, while weir runs, as weir backup does: the CA files, weir's
// HTTPS certificate, the admin token, a consistent snapshot of each
// SQLite database and the audit trail's complete lines (backupaudit.go).
// It writes to w what it copied and what it left to the
// operator. The copy is a data directory that New can start on. With
// storage.driver postgres it refuses: a copy without the ACME objects
// would restore as an empty CA.
func Backup(ctx context.Context, cfg Config, out string, w io.Writer) error {
	copied, notes, err := backup(ctx, cfg, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "backed up %s to %s:\n", cfg.DataDir, out)
	for _, c := range copied {
		fmt.Fprintf(w, "  %s\n", c)
	}
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// backup copies cfg's data directory to out and returns what it copied
// and what it left to the operator (files outside the data directory).
func backup(ctx context.Context, cfg Config, out string) (copied, notes []string, err error) {
	if cfg.Storage.Driver == DriverPostgres {
		// A copy of the data directory without the ACME objects would
		// look like a backup and restore as an empty CA.
		return nil, nil, errors.New("storage.driver is postgres: weir backup copies SQLite databases only. " +
			"Back up the PostgreSQL schema with pg_dump (e.g. pg_dump -Fc -n SCHEMA -d DATABASE -f weir.dump; " +
			"restore with pg_restore) and the data directory's CA keys, TLS files, admin token and audit trail with your file backups")
	}
	dd, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, nil, err
	}
	if st, err := os.Stat(dd); err != nil || !st.IsDir() {
		return nil, nil, fmt.Errorf("data-dir %s: not a directory (%v)", dd, err)
	}
	if err := emptyDir(out); err != nil {
		return nil, nil, err
	}
	files := []string{fileRootPEM, fileCARoot, fileCARootKey, fileCARootCRL, fileCAIntermediate, fileCAIntKey, fileTLSCert, fileTLSKey}
	for i, is := range cfg.CA.Issuers {
		if is.CertFile == "" {
			files = append(files, issuerCertFile(is.ID), issuerKeyFile(is.ID))
		} else {
			notes = append(notes, fmt.Sprintf("ca.issuers[%d] (%s) cert-file %s and key-file %s are outside the data directory: back them up yourself", i, is.ID, is.CertFile, is.KeyFile))
		}
	}
	if adminTokenWanted(cfg) {
		if filepath.IsAbs(cfg.Admin.TokenFile) {
			notes = append(notes, fmt.Sprintf("admin.token-file %s is outside the data directory: back it up yourself", cfg.Admin.TokenFile))
		} else {
			// The named credentials are in the store, snapshotted below.
			files = append(files, cfg.Admin.TokenFile)
		}
	}
	// The verifiable log's key, whose checkpoints the log's monitors
	// hold (its tables are in the store's snapshot below).
	if t := cfg.Transparency; t.Signer.NeedsKeyFile() && filepath.IsAbs(t.KeyFile) {
		notes = append(notes, fmt.Sprintf("transparency.key-file %s is outside the data directory: back it up yourself", t.KeyFile))
	} else if t.Signer.NeedsKeyFile() {
		files = append(files, t.KeyFile, logVerifierKeyName)
	}
	for _, name := range files {
		ok, err := copyFile(dataPath(dd, name), dataPath(out, name))
		if err != nil {
			return nil, nil, err
		}
		if ok {
			copied = append(copied, name)
		}
	}
	dbs := []string{cfg.Storage.Path}
	if cfg.RateLimiting.Backend == "sqlite" {
		dbs = append(dbs, fileRateLimitDB)
	}
	for _, name := range dbs {
		src := filepath.Join(dd, name)
		if !exists(src) {
			continue
		}
		if err := vacuumInto(ctx, src, filepath.Join(out, name)); err != nil {
			return nil, nil, fmt.Errorf("backing up %s: %w", src, err)
		}
		copied = append(copied, name+" (snapshot)")
	}
	trail, auditNotes, err := backupAudit(cfg, dd, out)
	if err != nil {
		return nil, nil, err
	}
	copied, notes = append(copied, trail...), append(notes, auditNotes...)
	for key, path := range map[string]string{
		"ca.intermediate.cert-file": cfg.CA.Intermediate.CertFile, "ca.intermediate.key-file": cfg.CA.Intermediate.KeyFile,
		"ca.root-file": cfg.CA.RootFile, "ca.root-crl-file": cfg.CA.RootCRLFile, "server.tls.cert-file": cfg.Server.TLS.CertFile, "server.tls.key-file": cfg.Server.TLS.KeyFile,
		"rate-limiting.redis.password-file": cfg.RateLimiting.Redis.PasswordFile,
	} {
		if path != "" {
			notes = append(notes, fmt.Sprintf("%s %s is outside the data directory: back it up yourself", key, path))
		}
	}
	slices.Sort(notes)
	notes = append(notes, "the configuration file is not in the data directory: back it up too")
	return copied, notes, nil
}

// emptyDir creates dir (mode 0700), or accepts an empty existing one.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return os.MkdirAll(dir, 0o700)
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s is not empty", dir)
	}
	return nil
}

// copyFile copies src to dst with src's mode, through a synced temporary
// file; a missing src is skipped (false).
func copyFile(src, dst string) (bool, error) {
	st, err := os.Stat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return false, err
	}
	if err := writeFileAtomic(dst, data, st.Mode().Perm()); err != nil {
		return false, fmt.Errorf("writing %s: %w", dst, err)
	}
	return true, nil
}

// vacuumInto writes a consistent snapshot of the SQLite database at src to
// the new file dst (mode 0600), in a directory it creates if need be
// (sqlite.Backup, which never writes to src).
func vacuumInto(ctx context.Context, src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	return sqlite.Backup(ctx, src, dst)
}
