// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto/sha256"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
)

// rootFingerprint is the SHA-256 fingerprint of the root certificate in
// rootPEM (the server's RootPEM), as openssl prints it: colon-separated hex.
func rootFingerprint(t *testing.T, rootPEM []byte) string {
	t.Helper()
	b, _ := pem.Decode(rootPEM)
	if b == nil || b.Type != "CERTIFICATE" {
		t.Fatal("the root PEM holds no certificate")
	}
	sum := sha256.Sum256(b.Bytes)
	parts := make([]string, len(sum))
	for i, x := range sum {
		parts[i] = fmt.Sprintf("%02X", x)
	}
	return strings.Join(parts, ":")
}
