// SPDX-License-Identifier: Apache-2.0

package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// offlineRootPath checks p, where weir init writes a new root's key, and
// makes it absolute: outside the data directory of cfg (serve must never
// hold it), and not an existing file (a key is never overwritten). ""
// stays "" (the root key goes to the data directory, as before). A path
// that cannot apply, because init makes no root (ca.intermediate is
// configured, or the data directory has a CA), is an error rather than
// ignored.
func offlineRootPath(cfg Config, p string) (string, error) {
	if p == "" {
		return "", nil
	}
	dd := cfg.DataDir
	abs, err := offlineKeyPath(dd, p)
	if err != nil {
		return "", err
	}
	if cfg.CA.Intermediate.CertFile != "" {
		return "", fmt.Errorf("ca.intermediate.cert-file is set (%s): weir makes no root, so a root key path does not apply", cfg.CA.Intermediate.CertFile)
	}
	if exists(dataPath(dd, fileCAIntermediate)) {
		return "", errors.New("the data directory has a CA already; a root key path applies to a new one (move an existing root key with weir ca take-root-offline)")
	}
	return abs, nil
}

// offlineKeyPath makes p, where the root's key goes, absolute: outside
// the data directory dd, and not an existing file.
func offlineKeyPath(dd, p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if inDir(dd, abs) {
		return "", fmt.Errorf("the root key's path %s is inside the data directory %s; choose one outside it (an offline medium)", abs, dd)
	}
	if exists(abs) {
		return "", fmt.Errorf("the root key's path %s exists; weir never overwrites a key", abs)
	}
	return abs, nil
}

// TakeRootOffline moves the data directory's root key to path, outside
// it (an offline medium), never over a file.
func TakeRootOffline(cfg Config, path string) error {
	dd, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return err
	}
	src := dataPath(dd, fileCARootKey)
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("the root key: %w", err)
	}
	abs, err := offlineKeyPath(dd, path)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(abs, data, 0o600); err != nil {
		return err
	}
	return os.Remove(src)
}

// inDir reports whether path p is dir or below it (both absolute).
func inDir(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
