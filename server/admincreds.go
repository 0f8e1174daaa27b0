package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/weir-pki/weir/web/admin"
)

// The administrators' named credentials (web/admin/credentials.go) live in
// a file beside the admin token: admin-credentials.json, JSON, mode 0600,
// holding each credential's name, role, creation time and the SHA-256 of
// its token (never the token). The admin API writes it when a credential
// is added or revoked (`weir admin token`), and weir reads it again when
// its content changes, so that an edit, or a copy from another replica,
// takes effect without a restart: a credential no longer in it stops
// working and its dashboard sessions end within credentialsPoll.
//
// A file rather than a table of the store: the credentials guard the
// admin listener of each process, which works (and must let an
// administrator in) while the store is unreachable; they are a handful
// of lines that a deployment manages like the token file next to them
// (a secret copied to every replica); and the store keeps ACME state,
// which `weir migrate-storage` moves, not the operator's own access.

// adminCredentialsName is the file's name in the token file's directory.
const adminCredentialsName = "admin-credentials.json"

// credentialsPoll is how often the file is checked for changes.
const credentialsPoll = time.Second

// adminCredentialsPath is the credentials file of cfg.
func adminCredentialsPath(cfg Config) string {
	return filepath.Join(filepath.Dir(adminTokenPath(cfg)), adminCredentialsName)
}

// credentialsFile is the file's JSON form.
type credentialsFile struct {
	Credentials []admin.StoredCredential `json:"credentials"`
}

// loadAdminCredentials reads the credentials file; a missing one is an
// empty set. Unknown members, a bad entry or a file others can write are
// refused, with the file named.
func loadAdminCredentials(path string) ([]admin.StoredCredential, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("admin credentials: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("admin credentials: %s is writable by group or others (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	var f credentialsFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("admin credentials: %s: %w", path, err)
	}
	if err := admin.ValidateCredentials(f.Credentials); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Credentials, nil
}

// saveAdminCredentials writes the set, atomically, mode 0600.
func saveAdminCredentials(path string, set []admin.StoredCredential) error {
	if set == nil {
		set = []admin.StoredCredential{}
	}
	data, err := json.MarshalIndent(credentialsFile{Credentials: set}, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'), 0o600)
}

// newAdminCredentials is the credential set of the admin listener, read
// from its file and saved to it; nil when the listener takes no token.
func newAdminCredentials(cfg Config) (*admin.CredentialSet, error) {
	if !adminTokenWanted(cfg) {
		return nil, nil
	}
	path := adminCredentialsPath(cfg)
	stored, err := loadAdminCredentials(path)
	if err != nil {
		return nil, err
	}
	return admin.NewCredentialSet(stored, func(set []admin.StoredCredential) error { return saveAdminCredentials(path, set) }, nil)
}

// watchAdminCredentials reads the credentials file again whenever its
// content changes (polled every credentialsPoll), until ctx ends. A file
// that cannot be read or holds a bad entry is refused, logged, and the
// running set stays; a deleted file is an empty set.
func (s *Server) watchAdminCredentials(ctx context.Context) {
	if s.adminCreds == nil {
		return
	}
	path := adminCredentialsPath(s.currentConfig())
	last := fileDigest(path)
	tick := time.NewTicker(credentialsPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		d := fileDigest(path)
		if d == last {
			continue
		}
		last = d
		s.reloadAdminCredentials(path)
	}
}

// reloadAdminCredentials installs the file's set when it differs from the
// running one.
func (s *Server) reloadAdminCredentials(path string) {
	stored, err := loadAdminCredentials(path)
	if err == nil && digestOf(stored) == digestOf(s.adminCreds.Stored()) {
		return // the file this process wrote
	}
	if err == nil {
		err = s.adminCreds.Replace(stored)
	}
	if err != nil {
		s.log.Error("admin credentials reload refused; the running set stays", "file", path, "err", err)
		return
	}
	s.log.Info("admin credentials reloaded; sessions of credentials no longer there end", "file", path, "credentials", len(stored))
}

// digestOf is a digest of a set's names, roles and token digests.
func digestOf(set []admin.StoredCredential) [sha256.Size]byte {
	h := sha256.New()
	for _, c := range set {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", c.Name, c.Role, c.SHA256)
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}
