// SPDX-License-Identifier: Apache-2.0

//go:build pkcs11

package main

// pkcs11Built reports whether PKCS#11 signers are built in: this build has
// them (ca's pkcs11 signer, -tags pkcs11).
const pkcs11Built = true
