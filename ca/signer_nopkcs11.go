// SPDX-License-Identifier: Apache-2.0

//go:build !pkcs11

package ca

import (
	"crypto"
	"errors"
	"io"
)

// PKCS11Built reports whether this build has the pkcs11 signer.
const PKCS11Built = false

// openPKCS11 refuses: the pure-Go build (CGO_ENABLED=0, the plain
// container image) has no PKCS#11.
func openPKCS11(PKCS11Config) (crypto.Signer, io.Closer, error) {
	return nil, nil, errors.New("this weir was built without PKCS#11 support; use a build with it " +
		"(go build -tags pkcs11 ./cmd/weir, with cgo; see README, \"Builds\")")
}
