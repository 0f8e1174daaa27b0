// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SecretSource is where a passphrase or PIN is read from: exactly one of
// a file, an environment variable, or a systemd credential (the file
// named Credential in $CREDENTIALS_DIRECTORY, from LoadCredential= or
// LoadCredentialEncrypted=). A file's trailing newline is not part of
// the secret.
type SecretSource struct {
	File       string `yaml:"file"`
	Env        string `yaml:"env"`
	Credential string `yaml:"credential"`
}

func (s SecretSource) empty() bool { return s.File == "" && s.Env == "" && s.Credential == "" }

// validate checks that at most one source is set (exactly one when
// required); key names the block in the error.
func (s SecretSource) validate(key string, required bool) error {
	n := 0
	for _, v := range []string{s.File, s.Env, s.Credential} {
		if v != "" {
			n++
		}
	}
	switch {
	case n > 1:
		return fmt.Errorf("%s: set only one of file, env and credential", key)
	case n == 0 && required:
		return fmt.Errorf("%s: set one of file, env and credential", key)
	}
	if strings.ContainsRune(s.Credential, filepath.Separator) {
		return fmt.Errorf("%s.credential: %q is a credential name, not a path", key, s.Credential)
	}
	return nil
}

// Read returns the secret; an unset variable, a missing credentials
// directory or file, and an empty secret are errors naming the source.
func (s SecretSource) Read() ([]byte, error) {
	var (
		b    []byte
		from string
	)
	switch {
	case s.File != "":
		from = "file " + s.File
		data, err := os.ReadFile(s.File)
		if err != nil {
			return nil, fmt.Errorf("reading the secret from %s: %w", from, err)
		}
		b = bytes.TrimRight(data, "\r\n")
	case s.Env != "":
		from = "environment variable " + s.Env
		v, ok := os.LookupEnv(s.Env)
		if !ok {
			return nil, fmt.Errorf("the secret's %s is not set", from)
		}
		b = []byte(v)
	case s.Credential != "":
		from = "systemd credential " + s.Credential
		dir := os.Getenv("CREDENTIALS_DIRECTORY")
		if dir == "" {
			return nil, fmt.Errorf("the secret is the %s, but CREDENTIALS_DIRECTORY is not set (LoadCredential= in the unit)", from)
		}
		data, err := os.ReadFile(filepath.Join(dir, s.Credential))
		if err != nil {
			return nil, fmt.Errorf("reading the %s: %w", from, err)
		}
		b = bytes.TrimRight(data, "\r\n")
	default:
		return nil, errors.New("no secret source is set (file, env or credential)")
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("the secret from %s is empty", from)
	}
	return b, nil
}
