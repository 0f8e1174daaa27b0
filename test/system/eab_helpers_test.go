// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"crypto"
	"strings"

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
