// SPDX-License-Identifier: Apache-2.0

package weirproc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The data-directory files that replicas share (server/bootstrap.go,
// server/admintoken.go, docs/high-availability.md).
const (
	caDir          = "ca"                        // root and intermediate certificates and keys
	caIntermediate = "ca/intermediate.pem"       // present when weir made its CA
	rootPEM        = "root.pem"                  // the root to distribute
	adminToken     = "admin-token"               // admin.token-file's default
	logKey         = "transparency/log-key.pem"  // transparency.key-file's default
	logVerifierKey = "transparency/log-key.vkey" // its verifier key
)

// SeedCA copies what replicas must share from one data directory into
// another, so that a weir started on toDataDir uses the same CA: every
// file of ca/ (root and intermediate, certificates and keys), root.pem
// and admin-token (the admin listener's bearer token at its default
// place, when there is one), and the verifiable log's key at its default
// place when there is one (every replica signs the log's checkpoints with
// the one key). Private keys and the token stay 0600, the
// directories 0700. weir's own HTTPS certificate (tls/) and the
// databases are not copied: each replica has its own.
func SeedCA(fromDataDir, toDataDir string) error {
	if _, err := os.Stat(filepath.Join(fromDataDir, filepath.FromSlash(caIntermediate))); err != nil {
		return fmt.Errorf("weirproc: SeedCA: %s holds no CA of weir's: %w", fromDataDir, err)
	}
	if err := os.MkdirAll(toDataDir, 0o700); err != nil {
		return err
	}
	src := filepath.Join(fromDataDir, caDir)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(fromDataDir, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(toDataDir, rel)
		switch {
		case d.IsDir():
			if err := os.MkdirAll(dst, 0o700); err != nil {
				return err
			}
			return os.Chmod(dst, 0o700)
		case d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".tmp-"):
			return copyFile(path, dst)
		}
		return nil // a leftover temp file, a socket, a link: not the CA's
	})
	if err != nil {
		return fmt.Errorf("weirproc: SeedCA: %w", err)
	}
	for _, name := range []string{rootPEM, adminToken, logKey, logVerifierKey} {
		src, dst := filepath.Join(fromDataDir, name), filepath.Join(toDataDir, name)
		if _, err := os.Stat(src); name != rootPEM && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return fmt.Errorf("weirproc: SeedCA: %w", err)
		}
		if err := copyFile(src, dst); err != nil {
			return fmt.Errorf("weirproc: SeedCA: %w", err)
		}
	}
	return nil
}

// copyFile copies a regular file with its permission bits; a private key
// or token gets 0600 whatever the source's mode.
func copyFile(src, dst string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	perm := st.Mode().Perm()
	if base := filepath.Base(src); strings.HasSuffix(base, "key.pem") || base == adminToken {
		perm = 0o600
	}
	tmp := dst + ".weirproc-tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, perm); err != nil { // exact bits, whatever the umask
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
