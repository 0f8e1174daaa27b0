// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/weir-pki/weir/ca"
)

// adminTokenBytes is the entropy of a generated admin token.
const adminTokenBytes = 32

// adminTokenPath resolves admin.token-file: relative to data-dir unless
// absolute.
func adminTokenPath(cfg Config) string {
	if filepath.IsAbs(cfg.Admin.TokenFile) {
		return cfg.Admin.TokenFile
	}
	return dataPath(cfg.DataDir, cfg.Admin.TokenFile)
}

// AdminTokenFile is the file of the admin listener's bearer token, for a
// client on this host; "" when the admin listener takes no token (it is
// off, or admin.auth is none).
func AdminTokenFile(cfg Config) string {
	if !adminTokenWanted(cfg) {
		return ""
	}
	return adminTokenPath(cfg)
}

// adminTokenWanted reports whether the configuration uses a token.
func adminTokenWanted(cfg Config) bool {
	return enabled(cfg.Admin.Enabled) && cfg.Admin.Auth == "token"
}

// loadOrCreateAdminToken returns the admin listener's bearer token from
// admin.token-file, generating it (32 random bytes, base64url, mode 0600)
// when the file does not exist. Like a CA key, a token file that group or
// others can read is refused. With the admin listener off, or auth none,
// there is no token: it returns "".
func loadOrCreateAdminToken(cfg Config) (string, error) {
	if !adminTokenWanted(cfg) {
		return "", nil
	}
	path := adminTokenPath(cfg)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		var raw [adminTokenBytes]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return "", fmt.Errorf("admin.token-file: %w", err)
		}
		token := base64.RawURLEncoding.EncodeToString(raw[:])
		if err := writeFileAtomic(path, []byte(token+"\n"), 0o600); err != nil {
			return "", fmt.Errorf("admin.token-file: writing %s: %w", path, err)
		}
		return token, nil
	}
	if err != nil {
		return "", fmt.Errorf("admin.token-file: %w", err)
	}
	if err := ca.CheckSecretMode(path, "the token"); err != nil {
		return "", fmt.Errorf("admin.token-file: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if len(token) < 16 || strings.ContainsAny(token, " \t\r\n") {
		return "", fmt.Errorf("admin.token-file: %s must hold one token of at least 16 characters; delete it to have weir generate one", path)
	}
	return token, nil
}

// rotateAdminToken reads admin.token-file again and, when it holds another
// token, hands it to the admin listener, which ends every dashboard session
// (the old token's). A file that holds no valid token is refused and the
// running token stays; a missing one is generated afresh, as at the first
// start. Under admin.auth: none there is no token to rotate.
func (s *Server) rotateAdminToken(trigger string) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	if s.admin == nil || !adminTokenWanted(s.cfg) {
		return nil
	}
	token, err := loadOrCreateAdminToken(s.cfg)
	if err != nil {
		s.log.Error("admin token reload refused; the running token stays", "trigger", trigger, "err", err)
		return err
	}
	sum := sha256.Sum256([]byte(token))
	if sum == s.adminToken {
		return nil
	}
	if err := s.admin.SetToken(token); err != nil {
		return err
	}
	s.adminToken = sum
	s.log.Info("admin token rotated; every dashboard session ended", "trigger", trigger, "file", adminTokenPath(s.cfg))
	return nil
}
