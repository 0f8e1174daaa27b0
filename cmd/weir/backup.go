package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/weir-pki/weir/storage/sqlite"
)

// cmdBackup copies a data directory, live: the CA files, weir's HTTPS
// certificate, the admin token, and consistent snapshots of the SQLite
// databases. The copy is a data directory weir serve can start on.
func cmdBackup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: weir backup [-config FILE] -out DIR\n\n"+
			"Copies the data directory to DIR (new, or empty) while weir runs: CA keys and\n"+
			"certificates, weir's HTTPS certificate, the admin token, and a consistent\n"+
			"snapshot of each SQLite database (VACUUM INTO). To restore, stop weir and\n"+
			"start it with data-dir set to DIR (or DIR moved into place). With\n"+
			"storage.driver postgres it refuses: back the database up with pg_dump.\n\n")
		fs.PrintDefaults()
	}
	configPath := fs.String("config", "", "the server's configuration `file` (default: embedded defaults)")
	out := fs.String("out", "", "the backup `directory` to create")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "weir backup: %v\n", err)
		return 1
	}
	copied, notes, err := backup(ctx, cfg, *out)
	if err != nil {
		fmt.Fprintf(stderr, "weir backup: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "backed up %s to %s:\n", cfg.DataDir, *out)
	for _, c := range copied {
		fmt.Fprintf(stdout, "  %s\n", c)
	}
	for _, n := range notes {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
	return 0
}

// backup copies cfg's data directory to out and returns what it copied
// and what it left to the operator (files outside the data directory).
func backup(ctx context.Context, cfg Config, out string) (copied, notes []string, err error) {
	if cfg.Storage.Driver == driverPostgres {
		// A copy of the data directory without the ACME objects would
		// look like a backup and restore as an empty CA.
		return nil, nil, errors.New("storage.driver is postgres: weir backup copies SQLite databases only. " +
			"Back up the PostgreSQL schema with pg_dump (e.g. pg_dump -Fc -n SCHEMA -d DATABASE -f weir.dump; " +
			"restore with pg_restore) and the data directory's CA keys, TLS files and admin token with your file backups")
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
	files := []string{fileRootPEM, fileCARoot, fileCARootKey, fileCAIntermediate, fileCAIntKey, fileTLSCert, fileTLSKey}
	if adminTokenWanted(cfg) {
		if filepath.IsAbs(cfg.Admin.TokenFile) {
			notes = append(notes, fmt.Sprintf("admin.token-file %s is outside the data directory: back it up yourself", cfg.Admin.TokenFile))
		} else {
			files = append(files, cfg.Admin.TokenFile)
		}
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
	for key, path := range map[string]string{
		"ca.intermediate.cert-file": cfg.CA.Intermediate.CertFile, "ca.intermediate.key-file": cfg.CA.Intermediate.KeyFile,
		"ca.root-file": cfg.CA.RootFile, "server.tls.cert-file": cfg.Server.TLS.CertFile, "server.tls.key-file": cfg.Server.TLS.KeyFile,
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
