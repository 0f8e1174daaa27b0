// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bytes"
	"context"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
)

// TestOfflineRoot: init with the root key outside the data directory
// leaves none in it; serve runs; a new intermediate made from a CSR and
// signed with the offline key is imported, and serve issues under it,
// chaining to the same root.
func TestOfflineRoot(t *testing.T) {
	dd := filepath.Join(t.TempDir(), "data")
	offline := filepath.Join(t.TempDir(), "offline", "root-key.pem")
	cfg := DefaultConfig()
	cfg.DataDir = dd
	if _, err := InitDataDir(cfg, time.Now(), InitOptions{RootKeyOut: filepath.Join(dd, "ca", "root-key.pem")}); err == nil || !strings.Contains(err.Error(), "inside the data directory") {
		t.Fatalf("init with the root key inside the data directory: %v, want a refusal", err)
	}
	rep, err := InitDataDir(cfg, time.Now(), InitOptions{RootKeyOut: offline})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.Print(&out)
	if !strings.Contains(out.String(), offline) || strings.Contains(out.String(), fileCARootKey) {
		t.Errorf("init's report does not say where the root key went:\n%s", out.String())
	}
	if exists(dataPath(dd, fileCARootKey)) {
		t.Fatalf("init left %s in the data directory", fileCARootKey)
	}
	if st, err := os.Stat(offline); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the offline root key: %v, mode %v; want it written 0600", err, st)
	}
	useDir := func(c *Config) { c.DataDir = dd }

	// It issues nothing yet: weir ca import replaces an intermediate only
	// while the store holds no unexpired certificate of it
	// (TestImportKeepsRevocation).
	var logs bytes.Buffer
	t.Run("serve without the root key", func(t *testing.T) {
		e := startEnvLog(t, useDir, &logs)
		e.Registered(t)
	})
	if strings.Contains(logs.String(), "root CA's key is in the data directory") {
		t.Errorf("serve warned of an online root key it does not have:\n%s", logs.String())
	}

	// The ceremony: a new key and CSR where the intermediate lives, the
	// offline root signs, the data directory imports.
	newKeyPath := filepath.Join(t.TempDir(), "int2-key.pem")
	csr, err := NewIntermediateKey("weir Intermediate CA 2", "weir", newKeyPath, "")
	if err != nil {
		t.Fatal(err)
	}
	chainPEM, err := SignIntermediateCSR(dataPath(dd, fileCARoot), RootKey{KeyFile: offline}, csr, time.Now(), rootCRLURL(cfg))
	if err != nil {
		t.Fatalf("signing the intermediate with the offline root: %v", err)
	}
	certPath := filepath.Join(t.TempDir(), "int2.pem")
	if err := os.WriteFile(certPath, chainPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportIntermediate(t.Context(), cfg, certPath, filepath.Join(t.TempDir(), "none.pem"), time.Now()); err == nil {
		t.Fatal("import with a missing key file succeeded")
	}
	kept, err := ImportIntermediate(t.Context(), cfg, certPath, newKeyPath, time.Now())
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if len(kept) != 2 {
		t.Errorf("import kept %v, want the old intermediate and its key", kept)
	}
	newInter, err := readCerts(dataPath(dd, fileCAIntermediate))
	if err != nil || newInter[0].Subject.CommonName != "weir Intermediate CA 2" {
		t.Fatalf("the data directory's intermediate after import: %v %v", newInter, err)
	}

	t.Run("serve with the new intermediate", func(t *testing.T) {
		e := startEnv(t, useDir)
		ctx, _, c, _ := e.Registered(t)
		chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "after.weir.test"})
		e.VerifyChain(chain, "after.weir.test")
		inter, err := x509.ParseCertificate(chain[1])
		if err != nil || !inter.Equal(newInter[0]) {
			t.Fatalf("the chain's intermediate is %v, want the imported one", inter.Subject)
		}
	})
}

// TestTakeRootOffline: the ceremony moves a generated root key out of
// the data directory, refuses a path inside it or over a file, and serve
// warns while the key is in the data directory.
func TestTakeRootOffline(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	if _, err := InitDataDir(cfg, time.Now(), InitOptions{}); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s, err := New(context.Background(), cfg, Options{Log: &logs})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if !strings.Contains(logs.String(), "root CA's key is in the data directory") {
		t.Errorf("serve with the root key in the data directory did not warn:\n%s", logs.String())
	}
	if err := TakeRootOffline(cfg, dataPath(cfg.DataDir, "elsewhere.pem")); err == nil {
		t.Error("moving the root key inside the data directory succeeded")
	}
	taken := filepath.Join(t.TempDir(), "root-key.pem")
	if err := os.WriteFile(taken, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := TakeRootOffline(cfg, taken); err == nil || !strings.Contains(err.Error(), "never overwrites") {
		t.Errorf("moving the root key over a file: %v", err)
	}
	to := filepath.Join(t.TempDir(), "root-key.pem")
	if err := TakeRootOffline(cfg, to); err != nil {
		t.Fatal(err)
	}
	if exists(dataPath(cfg.DataDir, fileCARootKey)) || !exists(to) {
		t.Fatal("the root key was not moved")
	}
}
