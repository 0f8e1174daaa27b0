// SPDX-License-Identifier: Apache-2.0

package server

import (
	"fmt"
	"io"
	"log/slog"
	"net/url"

	"github.com/weir-pki/weir/ca"
)

// IntermediateConfig is the issuing intermediate: its certificate (the
// data directory's when cert-file is empty) and how its key is reached.
type IntermediateConfig struct {
	CertFile string `yaml:"cert-file"`
	// KeyFile is the key of the file and encrypted-file signers (the
	// data directory's ca/intermediate-key.pem when cert-file is empty).
	KeyFile string `yaml:"key-file"`
	// Signer says where the key is held: a plaintext file, an encrypted
	// file, a PKCS#11 token (ca.SignerConfig).
	Signer ca.SignerConfig `yaml:"signer"`
	// CRLURL is the CRL distribution point put in the certificates it
	// signs, where its CRL is served; empty means weir's own URL of it on
	// the plain-HTTP listener (ArtefactURL + /ca/crl.der for
	// ca.intermediate, + /crl/ID for the others).
	CRLURL string `yaml:"crl-url"`
	// IssuerURL is the AIA caIssuers URL put in the certificates it
	// signs, where its certificate is served; empty means weir's own
	// (ArtefactURL + /ca/intermediate.der for ca.intermediate, +
	// /ca/issuer/ID for the others).
	IssuerURL string `yaml:"issuer-url"`
	// RenewEarly tells the holders of its unexpired certificates to
	// renew now, through ARI (a window in the past, as in an incident),
	// and exempts their renewals from account limits: for an issuer that
	// a rotation retired. It reloads live.
	RenewEarly bool `yaml:"renew-early"`
}

// validate checks ca.intermediate (or an entry of ca.issuers, key its
// key): a key file goes with a certificate file, except for a PKCS#11
// key, which has no file; the URLs are absolute http(s) URLs.
func (c IntermediateConfig) validate(key string) []error {
	var errs []error
	if err := c.Signer.Validate(); err != nil {
		for _, e := range flattenErrors(err) {
			errs = append(errs, fmt.Errorf("%s.signer.%v", key, e))
		}
	}
	if c.Signer.SignerType() == ca.SignerPKCS11 && !ca.PKCS11Built {
		errs = append(errs, fmt.Errorf("%s.signer.type: pkcs11 is only in the build with PKCS#11 (CGO_ENABLED=1 go build -tags pkcs11 ./cmd/weir; see README, \"Builds\"); this weir is the pure-Go build", key))
	}
	switch {
	case !c.Signer.NeedsKeyFile() && c.KeyFile != "":
		errs = append(errs, fmt.Errorf("%s.key-file: a %s key has no file; leave key-file empty", key, c.Signer.SignerType()))
	case c.Signer.NeedsKeyFile() && (c.CertFile == "") != (c.KeyFile == ""):
		errs = append(errs, fmt.Errorf("%s: cert-file and key-file must both be set or both be empty", key))
	}
	for _, u := range []struct{ name, url string }{{"crl-url", c.CRLURL}, {"issuer-url", c.IssuerURL}} {
		if u.url == "" {
			continue
		}
		if p, err := url.Parse(u.url); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			errs = append(errs, fmt.Errorf("%s.%s: %q is not an absolute http:// or https:// URL", key, u.name, u.url))
		}
	}
	return errs
}

// openIntermediateKey opens the intermediate's key as sc says (keyFile:
// the key of the file types).
func openIntermediateKey(sc ca.SignerConfig, keyFile string) (ca.Signer, error) {
	if !sc.NeedsKeyFile() {
		keyFile = ""
	}
	s, err := ca.OpenSigner("ca.intermediate", sc, keyFile)
	if err != nil {
		return nil, err
	}
	return keyBetween(s), nil
}

// keyBetween stands between weir and the intermediate's key as it is
// opened: nothing in weir; a fault test sets it to a key that fails at
// will, as a token pulled out of its reader does.
var keyBetween = func(s ca.Signer) ca.Signer { return s }

// closeKey releases what the intermediate key of h holds (nil: nothing).
func closeKey(h *ca.Hierarchy) error {
	if h == nil {
		return nil
	}
	if c, ok := h.IntermediateKey.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// warnOnlineRoot warns when the root CA's key is in the data directory:
// serve never needs it, and a root key on the serving host is one
// compromise away from a rogue intermediate (offlineroot.go moves it).
func warnOnlineRoot(log *slog.Logger, dd string) {
	if p := dataPath(dd, fileCARootKey); exists(p) {
		log.Warn("the root CA's key is in the data directory; weir serve never needs it: move it offline "+
			"(weir ca take-root-offline -to PATH) and keep it for ceremonies", "key", p)
	}
}
