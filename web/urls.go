// SPDX-License-Identifier: Apache-2.0

package web

import (
	"fmt"
	"strings"

	"github.com/weir-pki/weir/acme"
)

// The URL paths of the ACME resources.
const (
	pathNewNonce     = "/acme/new-nonce"
	pathNewAccount   = "/acme/new-account"
	pathNewOrder     = "/acme/new-order"
	pathRevoke       = "/acme/revoke-cert"
	pathKeyChange    = "/acme/key-change"
	pathAccount      = "/acme/account/"
	pathOrder        = "/acme/order/"
	pathAuthz        = "/acme/authz/"
	pathChallenge    = "/acme/chall/"
	pathCert         = "/acme/cert/"
	pathIntermediate = "/ca/intermediate.der"
	pathCRL          = "/ca/crl.der"
	pathRootCRL      = "/ca/root-crl.der" // the root's CRL of the intermediates
	// PathLog is where the verifiable log is served: its checkpoint at
	// PathLog+"/checkpoint", its tiles under PathLog+"/tile/".
	PathLog         = "/log"
	pathIssuerCRL   = "/crl/"       // + issuer ID: each issuer's CRL
	pathIssuerCert  = "/ca/issuer/" // + issuer ID: each issuer's intermediate (DER)
	pathRenewalInfo = "/acme/renewal-info"
	// pathAccountHash is the prefix of dns-persist-01's hashed account
	// URIs: names only, nothing is served there.
	pathAccountHash = "/acme/account-hash/"
)

// urls builds absolute resource URLs.
type urls struct{ base string }

func (u urls) directory() string                    { return u.base + "/directory" }
func (u urls) account(id acme.AccountID) string     { return u.base + pathAccount + string(id) }
func (u urls) orders(id acme.AccountID) string      { return u.account(id) + "/orders" }
func (u urls) order(id acme.OrderID) string         { return u.base + pathOrder + string(id) }
func (u urls) finalize(id acme.OrderID) string      { return u.order(id) + "/finalize" }
func (u urls) authz(id acme.AuthzID) string         { return u.base + pathAuthz + string(id) }
func (u urls) challenge(id acme.ChallengeID) string { return u.base + pathChallenge + string(id) }
func (u urls) certificate(s string) string          { return u.base + pathCert + s }
func (u urls) certIssuer(s string) string           { return u.base + pathCert + s + "/issuer" }
func (u urls) intermediate() string                 { return u.base + pathIntermediate }
func (u urls) crl() string                          { return u.base + pathCRL }
func (u urls) path(p string) string                 { return u.base + p }

// link formats one Link header value (RFC 8288).
func link(url, rel string) string { return fmt.Sprintf("<%s>;rel=%q", url, rel) }

// IntermediateURL is the AIA caIssuers URL for a server at base.
func IntermediateURL(base string) string { return urls{base: base}.intermediate() }

// CRLURL is the CRL distribution point for a server at base.
func CRLURL(base string) string { return urls{base: base}.crl() }

// RootCRLURL is the intermediates' CRL distribution point, the root's
// CRL, for a server at base.
func RootCRLURL(base string) string { return base + pathRootCRL }

// AccountHashPrefix is the directory's accountHashPrefix for a server at
// base (draft-ietf-acme-dns-persist-02 §4.1): stable for as long as base
// is.
func AccountHashPrefix(base string) string {
	return strings.TrimSuffix(base, "/") + pathAccountHash
}

// PersistMeta is what weir says of dns-persist-01: its issuer domain
// names and the prefix of hashed account URIs.
type PersistMeta struct {
	IssuerDomainNames []string
	AccountHashPrefix string
}

// IssuerCRLURL is the default CRL distribution point of issuer id's
// certificates for a server at base.
func IssuerCRLURL(base, id string) string { return base + pathIssuerCRL + id }

// IssuerCertURL is the default AIA caIssuers URL of issuer id's
// certificates for a server at base.
func IssuerCertURL(base, id string) string { return base + pathIssuerCert + id }

// AccountURL is the URL of account id for a server at base: the kid of
// its requests, and what a CAA accounturi parameter names (RFC 8657 §3).
func AccountURL(base, id string) string {
	return urls{base: strings.TrimSuffix(base, "/")}.account(acme.AccountID(id))
}
