package ca

import (
	"errors"
	"fmt"
	"net/url"
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
	for i, u := range c.CRLShardURLs {
		if u == "" {
			errs = append(errs, fmt.Errorf("ca: config: CRL shard %d has no URL", i+1))
		} else if err := checkURL(fmt.Sprintf("CRL shard %d URL", i+1), u); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
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
