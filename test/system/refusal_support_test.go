// SPDX-License-Identifier: Apache-2.0

package system

// Helpers the refusal tests share with tests still in package server,
// copied unchanged from server/eab_test.go, server/metrics_test.go and
// server/input_checks_test.go (now server/order_helpers_test.go).

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/weir-pki/weir/internal/acmeenv"
)

// eabJWS builds an externalAccountBinding with the protected header hdr
// over payload, MACed with HS256 and hmacKey (whatever hdr says).
func eabJWS(t *testing.T, hdr map[string]any, payload, hmacKey []byte) json.RawMessage {
	t.Helper()
	return eabJWSRaw(t, acmeenv.MarshalJSON(t, hdr), payload, hmacKey)
}

// eabJWSRaw is eabJWS with the protected header's JSON text ph as it is.
func eabJWSRaw(t *testing.T, ph, payload, hmacKey []byte) json.RawMessage {
	t.Helper()
	protected := base64.RawURLEncoding.EncodeToString(ph)
	pl := base64.RawURLEncoding.EncodeToString(payload)
	m := hmac.New(sha256.New, hmacKey)
	m.Write([]byte(protected + "." + pl))
	return acmeenv.MarshalJSON(t, map[string]string{"protected": protected, "payload": pl,
		"signature": base64.RawURLEncoding.EncodeToString(m.Sum(nil))})
}
