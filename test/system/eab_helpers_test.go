// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weir-pki/weir/internal/acmeenv"
	xacme "golang.org/x/crypto/acme"
)

// eabRegister registers key with x/crypto/acme and an External Account
// Binding of kid MACed with hmacKey.
func (e *env) eabRegister(ctx context.Context, key crypto.Signer, kid string, hmacKey []byte) (*xacme.Account, error) {
	return e.Client(key).Register(ctx, &xacme.Account{
		ExternalAccountBinding: &xacme.ExternalAccountBinding{KID: kid, Key: hmacKey},
	}, xacme.AcceptTOS)
}

// accountID is the ID at the end of an account URL.
func (e *env) accountID(uri string) string {
	return strings.TrimPrefix(uri, e.Base+"/acme/account/")
}

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
