// SPDX-License-Identifier: Apache-2.0

//go:build !pkcs11

package main

// pkcs11Built reports whether PKCS#11 signers are built in; a build with
// the pkcs11 tag sets it true in its own file.
const pkcs11Built = false
