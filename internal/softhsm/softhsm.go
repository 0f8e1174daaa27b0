// SPDX-License-Identifier: Apache-2.0

// Package softhsm makes SoftHSM2 tokens, each in a directory of its own,
// for the PKCS#11 tests: the token's configuration file, softhsm2-util
// to initialise it and to import keys, and OpenSC's pkcs11-tool to make
// Ed25519 key pairs inside it.
package softhsm

import (
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Modules are where Debian's softhsm2 package puts the PKCS#11 library.
var Modules = []string{"/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so"}

// Module is the SoftHSM2 library's path, or an error saying how to
// install it.
func Module() (string, error) {
	if _, err := exec.LookPath("softhsm2-util"); err != nil {
		return "", errors.New("softhsm2 is not installed (apt-get install -y softhsm2)")
	}
	for _, m := range Modules {
		if _, err := os.Stat(m); err == nil {
			return m, nil
		}
	}
	return "", fmt.Errorf("softhsm2-util is installed but its library is in none of %v", Modules)
}

// Token is an initialised SoftHSM2 token whose configuration file and
// storage are in Dir.
type Token struct {
	Dir, Conf, Module, Label, PIN string
}

// New initialises a token labelled label with user PIN pin in dir (its
// conf file and a tokens directory). A process that loads the module
// must have SOFTHSM2_CONF set to t.Conf before it does (Env).
func New(dir, label, pin string) (*Token, error) {
	module, err := Module()
	if err != nil {
		return nil, err
	}
	t := &Token{Dir: dir, Conf: filepath.Join(dir, "softhsm2.conf"), Module: module, Label: label, PIN: pin}
	tokens := filepath.Join(dir, "tokens")
	if err := os.MkdirAll(tokens, 0o700); err != nil {
		return nil, err
	}
	conf := fmt.Sprintf("directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n", tokens)
	if err := os.WriteFile(t.Conf, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	if err := t.util("--init-token", "--free", "--label", label, "--so-pin", pin+"-so", "--pin", pin); err != nil {
		return nil, err
	}
	return t, nil
}

// Env is the environment variable that points SoftHSM2 at the token.
func (t *Token) Env() string { return "SOFTHSM2_CONF=" + t.Conf }

// ImportKey stores key in the token as a key pair with the label and
// the hex CKA_ID id.
func (t *Token) ImportKey(key crypto.Signer, label, id string) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	p := filepath.Join(t.Dir, "import-"+id+".pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return err
	}
	defer os.Remove(p)
	return t.util("--import", p, "--token", t.Label, "--pin", t.PIN, "--label", label, "--id", id)
}

// GenerateEd25519 makes an Ed25519 key pair (CKK_EC_EDWARDS) inside the
// token with the label and the hex CKA_ID id, as an operator would with
// pkcs11-tool (docs/operations.md), and returns its public key read back
// from the token. Unlike ImportKey's pair, whose CKA_EC_POINT SoftHSM2
// stores as the raw 32 bytes, this pair's is the DER OCTET STRING.
func (t *Token) GenerateEd25519(label, id string) (ed25519.PublicKey, error) {
	if _, err := exec.LookPath("pkcs11-tool"); err != nil {
		return nil, errors.New("pkcs11-tool is not installed (apt-get install -y opensc)")
	}
	base := []string{"--module", t.Module, "--token-label", t.Label}
	if err := t.run("pkcs11-tool", append(base, "--login", "--pin", t.PIN, "--keypairgen",
		"--key-type", "EC:edwards25519", "--label", label, "--id", id)...); err != nil {
		return nil, err
	}
	p := filepath.Join(t.Dir, "pub-"+id+".pem")
	if err := t.run("pkcs11-tool", append(base, "--read-object", "--type", "pubkey", "--id", id, "--output-file", p)...); err != nil {
		return nil, err
	}
	defer os.Remove(p)
	out, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(out)
	if block == nil {
		return nil, fmt.Errorf("pkcs11-tool --read-object wrote no PEM public key to %s", p)
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the public key pkcs11-tool read back: %w", err)
	}
	edPub, ok := pub.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("the public key pkcs11-tool read back is a %T, want Ed25519", pub)
	}
	return edPub, nil
}

// util runs softhsm2-util on the token's configuration.
func (t *Token) util(args ...string) error { return t.run("softhsm2-util", args...) }

// run runs a tool on the token's configuration.
func (t *Token) run(tool string, args ...string) error {
	cmd := exec.Command(tool, args...)
	cmd.Env = append(os.Environ(), t.Env())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", tool, strings.Join(args, " "), err, out)
	}
	return nil
}

// ForTest is New in a temporary directory of t, with SOFTHSM2_CONF set
// for the rest of t (so the test must not be parallel). Without softhsm2
// the test is skipped, but fails under CI=true, where .ci/run installs it.
func ForTest(t testing.TB, label, pin string) *Token {
	t.Helper()
	tok, err := New(t.TempDir(), label, pin)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("SoftHSM2 token: %v", err)
		}
		t.Skipf("SoftHSM2 token: %v", err)
	}
	t.Setenv("SOFTHSM2_CONF", tok.Conf)
	return tok
}
