// SPDX-License-Identifier: Apache-2.0

// Package ca is weir's certificate-authority core: it creates and loads a
// two-level CA hierarchy (root and intermediate), checks subscriber public
// keys against a key policy, signs leaf certificates for DNS names and IP
// addresses, and produces X.509 v2 CRLs signed by the intermediate.
//
// The package is a leaf: it depends only on the standard library, keeps no
// mutable package-level state, and takes its clock as a constructor argument
// so that callers and tests control time.
package ca
