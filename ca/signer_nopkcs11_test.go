// SPDX-License-Identifier: Apache-2.0

//go:build !pkcs11

package ca

import (
	"strings"
	"testing"
)

// TestPKCS11NotBuilt: the pure-Go build refuses a pkcs11 signer with an
// error naming the key and the build that has it.
func TestPKCS11NotBuilt(t *testing.T) {
	_, err := OpenSigner("ca.intermediate", SignerConfig{Type: SignerPKCS11,
		PKCS11: PKCS11Config{Module: "/usr/lib/softhsm/libsofthsm2.so", TokenLabel: "weir", KeyLabel: "int", PIN: SecretSource{Env: "PIN"}}}, "")
	if err == nil || !strings.Contains(err.Error(), "ca.intermediate") || !strings.Contains(err.Error(), "-tags pkcs11") {
		t.Fatalf("OpenSigner(pkcs11) without the tag: %v, want an error naming the key and -tags pkcs11", err)
	}
}
