// SPDX-License-Identifier: Apache-2.0

//go:build pkcs11

package server

import (
	"os"
	"strings"
	"testing"

	xacme "golang.org/x/crypto/acme"
	"golang.org/x/mod/sumdb/note"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/internal/acmeenv"
)

// TestPKCS11LogKeySigner: the log's key is an Ed25519 key pair made in
// the same SoftHSM2 token as the intermediate's P-256 key (transparency.
// signer of type pkcs11); weir issues through the token's intermediate
// key, and the checkpoint it signs with the token's Ed25519 key opens
// with note.Open under the public key read from the token, the verifier
// key weir writes being that key's.
func TestPKCS11LogKeySigner(t *testing.T) {
	ic, tok := hsmIntermediate(t)
	pub, err := tok.GenerateEd25519("weir-log", "0b")
	if err != nil {
		t.Fatalf("GenerateEd25519: %v", err)
	}
	logSigner := ic.Signer
	logSigner.PKCS11.KeyLabel = "weir-log"
	e := startEnv(t, func(c *Config) {
		c.CA.Intermediate = ic
		c.Transparency.Enabled = true
		c.Transparency.Signer = logSigner
	})
	ctx, _, c, _ := e.Registered(t)
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "log.weir.test"})
	e.VerifyChain(chain, "log.weir.test")

	l := e.srv.vlog
	if err := l.tick(t.Context()); err != nil {
		t.Fatalf("integrating the log's entries: %v", err)
	}
	size, head, err := l.store.LogHead(t.Context())
	if err != nil || size == 0 || head == nil {
		t.Fatalf("the log's head after an issuance: size %d, %q, %v; want a signed checkpoint", size, head, err)
	}
	vkey, err := note.NewEd25519VerifierKey(e.cfg.logOrigin(), pub)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(head, note.VerifierList(v))
	if err != nil {
		t.Fatalf("the checkpoint under the token's Ed25519 key: %v", err)
	}
	cp, err := transparency.OpenCheckpoint(head, v)
	if err != nil || cp.Size != size || !strings.HasPrefix(n.Text, e.cfg.logOrigin()+"\n") {
		t.Fatalf("the checkpoint %q: %+v, %v; want size %d under origin %s", n.Text, cp, err, size, e.cfg.logOrigin())
	}
	written, err := os.ReadFile(LogVerifierKeyFile(e.cfg))
	if err != nil || strings.TrimSpace(string(written)) != vkey {
		t.Fatalf("the verifier key file holds %q (%v), want the token key's %q", written, err, vkey)
	}
}
