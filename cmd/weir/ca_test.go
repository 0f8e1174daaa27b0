// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runWeir runs weir with args and returns its exit code and output.
func runWeir(args ...string) (int, string) {
	var out bytes.Buffer
	code := run(args, &out, &out)
	return code, out.String()
}

// TestCACeremonies: init with -root-key-out, then the ceremonies from
// the command line: a new intermediate key (encrypted) and CSR, signed
// with the offline root, imported into the data directory; take-root-offline
// refuses when the data directory holds no root key; the root's CRL
// revokes the intermediate, then is signed anew.
func TestCACeremonies(t *testing.T) {
	dir := t.TempDir()
	configPath, dataDir := filepath.Join(dir, "weir.yaml"), filepath.Join(dir, "data")
	rootKey := filepath.Join(dir, "offline", "root-key.pem")
	if code, out := runInit(t, "-config", configPath, "-data-dir", dataDir, "-root-key-out", rootKey); code != 0 ||
		!strings.Contains(out, rootKey) || strings.Contains(out, "ca/root-key.pem") {
		t.Fatalf("init -root-key-out: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "ca", "root-key.pem")); err == nil {
		t.Fatal("init -root-key-out left the root key in the data directory")
	}
	pass := filepath.Join(dir, "pass")
	if err := os.WriteFile(pass, []byte("int pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	key, csr, chain := filepath.Join(dir, "int2-key.pem"), filepath.Join(dir, "int2.csr"), filepath.Join(dir, "int2.pem")
	steps := [][]string{
		{"ca", "new-intermediate-key", "-name", "weir Intermediate CA 2", "-key-out", key, "-csr-out", csr, "-passphrase-file", pass},
		{"ca", "sign-intermediate", "-root-cert", filepath.Join(dataDir, "ca", "root.pem"), "-root-key", rootKey, "-csr", csr, "-out", chain},
	}
	for _, args := range steps {
		if code, out := runWeir(args...); code != 0 {
			t.Fatalf("weir %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	if data, err := os.ReadFile(key); err != nil || !strings.Contains(string(data), "ENCRYPTED PRIVATE KEY") {
		t.Fatalf("the new key is not encrypted PKCS#8: %v", err)
	}
	// The data directory's signer is plaintext: the encrypted key is refused.
	if code, out := runWeir("ca", "import", "-config", configPath, "-cert", chain, "-key", key); code != 1 || !strings.Contains(out, "ENCRYPTED PRIVATE KEY") {
		t.Errorf("import of an encrypted key under a file signer: exit %d\n%s", code, out)
	}
	cfgText, err := os.ReadFile(configPath)
	if err != nil {
		t.Fatal(err)
	}
	encrypted := strings.Replace(string(cfgText), "      type: file\n      passphrase: { file: \"\",",
		"      type: encrypted-file\n      passphrase: { file: \""+pass+"\",", 1)
	if encrypted == string(cfgText) {
		t.Fatal("the config's signer block was not found")
	}
	if err := os.WriteFile(configPath, []byte(encrypted), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := runWeir("ca", "import", "-config", configPath, "-cert", chain, "-key", key); code != 0 || !strings.Contains(out, "kept the one it replaces") {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	if code, out := runWeir("ca", "take-root-offline", "-config", configPath, "-to", filepath.Join(dir, "again.pem")); code != 1 || !strings.Contains(out, "root key") {
		t.Errorf("take-root-offline without a root key in the data directory: exit %d\n%s", code, out)
	}
	// The root's CRL: init signed the first; the ceremony revokes the
	// new intermediate into it, keeping its state in the file.
	rootCRL := filepath.Join(dataDir, "ca", "root-crl.der")
	if _, err := os.Stat(rootCRL); err != nil {
		t.Fatalf("init signed no root CRL: %v", err)
	}
	rootCert := filepath.Join(dataDir, "ca", "root.pem")
	if code, out := runWeir("ca", "sign-root-crl", "-root-cert", rootCert, "-root-key", rootKey, "-out", rootCRL, "-revoke", chain); code != 2 || !strings.Contains(out, "-reason is required") {
		t.Errorf("sign-root-crl -revoke without -reason: exit %d\n%s", code, out)
	}
	if code, out := runWeir("ca", "sign-root-crl", "-root-cert", rootCert, "-root-key", rootKey, "-out", rootCRL, "-revoke", chain, "-reason", "superseded"); code != 0 ||
		!strings.Contains(out, "revoked \"CN=weir Intermediate CA 2\"") || !strings.Contains(out, "root CRL number 2 (1 revoked intermediates") {
		t.Errorf("sign-root-crl -revoke: exit %d\n%s", code, out)
	}
	if code, out := runWeir("ca", "sign-root-crl", "-root-cert", rootCert, "-root-key", rootKey, "-out", rootCRL, "-next-update", "720h"); code != 0 ||
		!strings.Contains(out, "root CRL number 3 (1 revoked intermediates") {
		t.Errorf("sign-root-crl again, revoking nothing: exit %d\n%s", code, out)
	}
	if code, out := runWeir("ca", "sign-root-crl", "-root-cert", rootCert, "-root-key", rootKey, "-out", rootCRL, "-revoke", rootCert, "-reason", "keyCompromise"); code != 1 || !strings.Contains(out, "root itself") {
		t.Errorf("sign-root-crl revoking the root: exit %d\n%s", code, out)
	}
	if code, _ := runWeir("ca", "no-such-ceremony"); code != 2 {
		t.Errorf("an unknown ceremony: exit %d, want 2", code)
	}
}
