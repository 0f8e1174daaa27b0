// SPDX-License-Identifier: Apache-2.0

package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// fileAdminURL, in the data directory, is the admin API's URL as weir serve
// last bound it: the operator commands' way to the running server when the
// configuration file no longer loads (an edit the server refused to reload:
// it keeps serving its last good configuration, and this is its address).
const fileAdminURL = "admin.url"

// RecordAdminURL writes the URL of the admin listener at addr to
// <data-dir>/admin.url.
func (s *Server) RecordAdminURL(addr net.Addr) error {
	scheme := "http"
	if s.cfg.Admin.TLS {
		scheme = "https"
	}
	u := scheme + "://" + dialAddr(addr.String())
	return writeFileAtomic(dataPath(s.cfg.DataDir, fileAdminURL), []byte(u+"\n"), 0o644)
}

// AdminTarget is where the operator commands find the admin API.
type AdminTarget struct {
	// Config is the configuration read, or, when ConfigErr is set, the
	// defaults with the few keys still legible in the file (data-dir and
	// admin's token-file, auth and tls).
	Config Config
	// URL is the admin API's base URL; "" when unknown.
	URL string
	// TokenFile is the admin token's file; "" when the API takes none.
	TokenFile string
	// ConfigErr is why the configuration did not load; the target then
	// comes from the address weir serve last recorded (URLFile).
	ConfigErr error
	// URLFile is the file URL was read from, in the fallback.
	URLFile string
}

// FindAdmin locates the admin API of the weir configured by the file at
// configPath ("" for the defaults). When the file does not load, it falls
// back to the admin URL weir serve recorded in the data directory, so that
// the operator commands still reach a server that runs on its last good
// configuration; the error is only for a target that cannot be found.
func FindAdmin(configPath string) (AdminTarget, error) {
	cfg, err := LoadConfig(configPath)
	if err == nil {
		if cfg.DataDir, err = filepath.Abs(cfg.DataDir); err != nil {
			return AdminTarget{}, err
		}
		t := AdminTarget{Config: cfg, TokenFile: AdminTokenFile(cfg)}
		if cfg.Admin.On() {
			t.URL = AdminURL(cfg)
		}
		return t, nil
	}
	t := AdminTarget{Config: legibleConfig(configPath), ConfigErr: err}
	if t.Config.DataDir, err = filepath.Abs(t.Config.DataDir); err != nil {
		return AdminTarget{}, err
	}
	t.TokenFile = AdminTokenFile(t.Config)
	t.URLFile = dataPath(t.Config.DataDir, fileAdminURL)
	b, rerr := os.ReadFile(t.URLFile)
	if rerr == nil {
		t.URL = strings.TrimSpace(string(b))
	} else if !errors.Is(rerr, os.ErrNotExist) {
		return t, fmt.Errorf("%w; and the last admin address: %v", t.ConfigErr, rerr)
	}
	return t, nil
}

// legibleConfig is the defaults with what can still be read of the keys
// that locate the admin API and its token, and of log.format, from a file
// that does not load
// (not strict: unknown keys and bad values elsewhere are ignored).
func legibleConfig(path string) Config {
	cfg := DefaultConfig()
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg
	}
	var f struct {
		DataDir string `yaml:"data-dir"`
		Admin   struct {
			TokenFile string `yaml:"token-file"`
			Auth      string `yaml:"auth"`
			TLS       *bool  `yaml:"tls"`
		} `yaml:"admin"`
		Log struct {
			Format string `yaml:"format"`
		} `yaml:"log"`
	}
	_ = yaml.Unmarshal(data, &f) // a type error still fills the rest
	if f.DataDir != "" {
		cfg.DataDir = f.DataDir
	}
	if f.Admin.TokenFile != "" {
		cfg.Admin.TokenFile = f.Admin.TokenFile
	}
	if f.Admin.Auth != "" {
		cfg.Admin.Auth = f.Admin.Auth
	}
	if f.Log.Format != "" {
		cfg.Log.Format = f.Log.Format
	}
	if f.Admin.TLS != nil {
		cfg.Admin.TLS = *f.Admin.TLS
	}
	return cfg
}
