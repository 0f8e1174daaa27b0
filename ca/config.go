// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"
)

// Config holds the issuance settings of a CA.
type Config struct {
	// Lifetime is the default validity period of leaf certificates,
	// e.g. 2160h (90 days).
	Lifetime time.Duration
	// IssuerURL is the AIA caIssuers URL where the intermediate certificate
	// is served in DER form. Empty means no AIA extension.
	IssuerURL string
	// CRLURL is the CRL distribution point put in leaf certificates.
	// Empty means no CRL distribution point extension.
	CRLURL string
	// CRLShardURLs, when set, are the URLs of the shards 1 to N of the
	// CRLs (RFC 5280 partitioned CRLs): each leaf's distribution point is
	// that of shard 1 + (serial mod N), instead of CRLURL (shard 0, where
	// the leaves issued before sharding stay).
	CRLShardURLs []string
	// KeptCRLShardURLs are the URLs of the shards after those (N+1 to M)
	// that no new certificate names but unexpired ones, issued under more
	// shards, do: their CRLs are still made and served.
	KeptCRLShardURLs []string
	// CRLAliases are, by URL of a CRL above (CRLURL or a shard's), other
	// URLs at which the same CRL is served that certificates issued
	// earlier name as their distribution point: a CRL that names its URL
	// in an issuingDistributionPoint names these too, so that relying
	// parties take it for those certificates as well (RFC 5280 §5.2.5,
	// §6.3.3 (b)(2)(i)).
	CRLAliases map[string][]string
	// KeyPolicy decides which subscriber public keys are acceptable.
	KeyPolicy KeyPolicy
}

// Validate reports every problem with the configuration, joined with
// errors.Join: Lifetime must be positive and each URL, if set, must be an
// absolute http or https URL with a host.
func (c Config) Validate() error {
	var errs []error
	if c.Lifetime <= 0 {
		errs = append(errs, fmt.Errorf("ca: config: lifetime %v must be positive", c.Lifetime))
	}
	if err := checkURL("issuer URL", c.IssuerURL); err != nil {
		errs = append(errs, err)
	}
	if err := checkURL("CRL URL", c.CRLURL); err != nil {
		errs = append(errs, err)
	}
	for i, u := range append(slices.Clip(c.CRLShardURLs), c.KeptCRLShardURLs...) {
		if u == "" {
			errs = append(errs, fmt.Errorf("ca: config: CRL shard %d has no URL", i+1))
		} else if err := checkURL(fmt.Sprintf("CRL shard %d URL", i+1), u); err != nil {
			errs = append(errs, err)
		}
	}
	for u, aliases := range c.CRLAliases {
		for _, a := range aliases {
			if err := checkURL(fmt.Sprintf("alias of CRL URL %s", u), a); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// CRLIDP is what the issuingDistributionPoint of the CRL published at url
// names: url and its aliases.
func (c Config) CRLIDP(url string) []string {
	return append([]string{url}, c.CRLAliases[url]...)
}

// CRLShards is the number of shards whose CRLs are made (M): those new
// certificates name and the kept ones.
func (c Config) CRLShards() int { return len(c.CRLShardURLs) + len(c.KeptCRLShardURLs) }

// CRLShardURL is the URL of shard k, from 1 to CRLShards.
func (c Config) CRLShardURL(k int) string {
	if k <= len(c.CRLShardURLs) {
		return c.CRLShardURLs[k-1]
	}
	return c.KeptCRLShardURLs[k-1-len(c.CRLShardURLs)]
}

// checkURL validates an optional URL setting.
func checkURL(what, raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("ca: config: %s: %w", what, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("ca: config: %s %q must use http or https", what, raw)
	}
	if u.Host == "" {
		return fmt.Errorf("ca: config: %s %q has no host", what, raw)
	}
	return nil
}
