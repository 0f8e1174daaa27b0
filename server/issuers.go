// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/web"
)

// IssuerConfig is an entry of ca.issuers: an intermediate besides
// ca.intermediate (which is the issuer "default"), with an ID of its own.
// Each signs the CRL of the certificates it signed, at its own URL, for as
// long as it is configured; ca.active-issuer says which one signs new
// certificates. A rotation adds the new intermediate here (weir ca
// add-issuer), makes it active, and marks the old one renew-early
// (docs/operations.md, "Rotating the intermediate").
type IssuerConfig struct {
	// ID names the issuer in the store, in its URLs (/crl/ID,
	// /ca/issuer/ID) and in ca.active-issuer: lowercase letters, digits
	// and hyphens, up to 32 characters. It must not change while any of
	// its certificates is unexpired.
	ID string `yaml:"id"`
	// The intermediate: its certificate and key (the data directory's
	// ca/issuers/ID/intermediate.pem and intermediate-key.pem when
	// cert-file is empty, as weir ca add-issuer writes them), its URLs,
	// renew-early.
	IntermediateConfig `yaml:",inline"`
}

// issuerCertFile and issuerKeyFile are the data directory's files of
// issuer id, when its cert-file is empty.
func issuerCertFile(id string) string { return path.Join("ca/issuers", id, "intermediate.pem") }
func issuerKeyFile(id string) string  { return path.Join("ca/issuers", id, "intermediate-key.pem") }

// validateIssuers checks ca.issuers and ca.active-issuer: IDs of the
// form, none twice nor "default", and the active one configured.
func (c CAConfig) validateIssuers() []error {
	var errs []error
	seen := map[string]bool{acme.DefaultIssuer: true}
	for i, is := range c.Issuers {
		key := fmt.Sprintf("ca.issuers[%d]", i)
		switch {
		case !acme.IssuerIDPattern.MatchString(is.ID):
			errs = append(errs, fmt.Errorf("%s.id: %q must be lowercase letters, digits and hyphens (up to 32, a letter or digit first)", key, is.ID))
		case is.ID == acme.DefaultIssuer:
			errs = append(errs, fmt.Errorf("%s.id: %q is ca.intermediate's ID; choose another", key, is.ID))
		case seen[is.ID]:
			errs = append(errs, fmt.Errorf("%s.id: %q is given twice", key, is.ID))
		}
		seen[is.ID] = true
		errs = append(errs, is.validate(key)...)
	}
	if c.CRLShards < 1 || c.CRLShards > maxCRLShards {
		errs = append(errs, fmt.Errorf("ca.crl-shards: must be from 1 (one CRL per issuer) to %d, got %d", maxCRLShards, c.CRLShards))
	}
	if !seen[c.ActiveIssuer] {
		errs = append(errs, fmt.Errorf("ca.active-issuer: %q is neither %q (ca.intermediate) nor the id of an entry of ca.issuers", c.ActiveIssuer, acme.DefaultIssuer))
	}
	return errs
}

// maxCRLShards bounds ca.crl-shards: each shard is a CRL every replica
// signs at least every ca.crl-interval.
const maxCRLShards = 256

// issuerSet is the issuers weir serve signs with: each one's CA, the
// active one's, and the hierarchies whose keys it holds open.
type issuerSet struct {
	issuers []acme.Issuer
	active  *ca.CA
	keys    []*ca.Hierarchy
}

// close releases every issuer's key.
func (s *issuerSet) close() error {
	var errs []error
	for _, h := range s.keys {
		errs = append(errs, closeKey(h))
	}
	return errors.Join(errs...)
}

// renewEarly are the IDs of the issuers configured renew-early.
func (c CAConfig) renewEarly() []string {
	var ids []string
	if c.Intermediate.RenewEarly {
		ids = append(ids, acme.DefaultIssuer)
	}
	for _, is := range c.Issuers {
		if is.RenewEarly {
			ids = append(ids, is.ID)
		}
	}
	return ids
}

// openIssuers makes the CA of each issuer: def is ca.intermediate's
// hierarchy (loadOrCreateHierarchy), whose root every other issuer must
// chain to when it is known; each is checked for its use at now
// (intermediateUse); kept says, by issuer, up to which CRL shard its CRLs
// are made (keptCRLShards). On error nothing stays open but def.
func openIssuers(cfg Config, def *ca.Hierarchy, now time.Time, kept map[string]int) (*issuerSet, error) {
	set := &issuerSet{}
	add := func(id string, ic IntermediateConfig, h *ca.Hierarchy) error {
		c, err := newIssuerCA(cfg, id, ic, h, kept[id])
		if err != nil {
			return err
		}
		set.issuers = append(set.issuers, acme.Issuer{ID: id, CA: c})
		if id == cfg.CA.ActiveIssuer {
			set.active = c
		}
		return nil
	}
	if err := add(acme.DefaultIssuer, cfg.CA.Intermediate, def); err != nil {
		return nil, err
	}
	for i, is := range cfg.CA.Issuers {
		h, err := loadIssuerHierarchy(cfg, is, def.Root, now)
		if err != nil {
			set.close()
			return nil, fmt.Errorf("ca.issuers[%d] (%s): %w", i, is.ID, err)
		}
		set.keys = append(set.keys, h)
		if err := add(is.ID, is.IntermediateConfig, h); err != nil {
			set.close()
			return nil, fmt.Errorf("ca.issuers[%d] (%s): %w", i, is.ID, err)
		}
	}
	if set.active == nil {
		set.close()
		return nil, fmt.Errorf("ca.active-issuer: %q is not configured", cfg.CA.ActiveIssuer)
	}
	return set, nil
}

// loadIssuerHierarchy loads an entry of ca.issuers: its files, or the
// data directory's, under root, for its use at now.
func loadIssuerHierarchy(cfg Config, is IssuerConfig, root *x509.Certificate, now time.Time) (*ca.Hierarchy, error) {
	use, err := intermediateUse(cfg, is.ID, now)
	if err != nil {
		return nil, err
	}
	certFile, keyFile := is.CertFile, is.KeyFile
	if certFile == "" {
		certFile, keyFile = dataPath(cfg.DataDir, issuerCertFile(is.ID)), dataPath(cfg.DataDir, issuerKeyFile(is.ID))
	}
	chain, err := readCerts(certFile)
	if err != nil {
		return nil, err
	}
	if root == nil && len(chain) > 1 && chain[len(chain)-1].CheckSignatureFrom(chain[len(chain)-1]) == nil {
		root = chain[len(chain)-1]
	}
	return loadWithKey(root, chain[0], is.Signer, keyFile, use)
}

// newIssuerCA is the CA of issuer id (intermediate ic, hierarchy h), with
// its URLs: ic's, else weir's own on the plain-HTTP listener
// (ArtefactURL). Its CRL shards are those new certificates name
// (ca.crl-shards), then, up to keptUpTo, those kept for older
// certificates (keptCRLShards).
func newIssuerCA(cfg Config, id string, ic IntermediateConfig, h *ca.Hierarchy, keptUpTo int) (*ca.CA, error) {
	base := ArtefactURL(cfg)
	crlURL, issuerURL := issuerCRLURL(base, id), issuerCertURL(base, id)
	if ic.IssuerURL != "" {
		issuerURL = ic.IssuerURL
	}
	// Shards: crl-url/N when crl-url is set, else weir's /crl/ID/N.
	shardBase := web.IssuerCRLURL(base, id)
	if ic.CRLURL != "" {
		crlURL, shardBase = ic.CRLURL, strings.TrimSuffix(ic.CRLURL, "/")
	}
	var shards, kept []string
	for k := 1; k <= max(newShards(cfg.CA), keptUpTo); k++ {
		u := fmt.Sprintf("%s/%d", shardBase, k)
		if k <= newShards(cfg.CA) {
			shards = append(shards, u)
		} else {
			kept = append(kept, u)
		}
	}
	return ca.New(ca.Config{
		Lifetime: cfg.CA.CertificateLifetime, IssuerURL: issuerURL, CRLURL: crlURL, CRLShardURLs: shards, KeptCRLShardURLs: kept,
		CRLAliases: httpsAliases(cfg, ic, crlURL, slices.Concat(shards, kept)),
		KeyPolicy:  ca.KeyPolicy{AllowEd25519: cfg.CA.AllowEd25519},
	}, h, nil)
}

// issuerCRLURL and issuerCertURL are weir's own URLs of issuer id's CRL
// and certificate for a server at base: ca.intermediate's are those of
// before issuers existed.
func issuerCRLURL(base, id string) string {
	if id == acme.DefaultIssuer {
		return web.CRLURL(base)
	}
	return web.IssuerCRLURL(base, id)
}

func issuerCertURL(base, id string) string {
	if id == acme.DefaultIssuer {
		return web.IntermediateURL(base)
	}
	return web.IssuerCertURL(base, id)
}

// httpsAliases are, for each of weir's own CRL URLs on the plain-HTTP
// listener (the issuer's, crlURL, and its shards'), the same CRL's URL
// on the ACME listener, which the certificates issued before the
// plain-HTTP listener existed name: a partitioned CRL names both in its
// issuingDistributionPoint, so that relying parties take it for the
// certificates of either (ca.Config.CRLAliases). None when the URLs are
// the ACME listener's already, or crl-url sets them.
func httpsAliases(cfg Config, ic IntermediateConfig, crlURL string, shards []string) map[string][]string {
	base, https := ArtefactURL(cfg), externalURL(cfg)
	if ic.CRLURL != "" || base == https {
		return nil
	}
	aliases := map[string][]string{}
	for _, u := range append([]string{crlURL}, shards...) {
		aliases[u] = []string{https + strings.TrimPrefix(u, base)}
	}
	return aliases
}

// withoutRenewEarly clears every issuer's renew-early (which reloads
// live), so that what is left compares for restartKeys. ca.issuers is
// copied first: c shares it with the configuration it was copied from.
func (c *CAConfig) withoutRenewEarly() {
	c.Intermediate.RenewEarly = false
	c.Issuers = append([]IssuerConfig(nil), c.Issuers...)
	for i := range c.Issuers {
		c.Issuers[i].RenewEarly = false
	}
}

// takeRenewEarly takes the renew-early of each issuer from cur (a
// reload): those of the issuers c has, by ID.
func (c *CAConfig) takeRenewEarly(cur CAConfig) {
	c.Intermediate.RenewEarly = cur.Intermediate.RenewEarly
	c.Issuers = append([]IssuerConfig(nil), c.Issuers...)
	for i := range c.Issuers {
		c.Issuers[i].RenewEarly = false
		for _, is := range cur.Issuers {
			if is.ID == c.Issuers[i].ID {
				c.Issuers[i].RenewEarly = is.RenewEarly
			}
		}
	}
}

// AddIssuer imports the intermediate in certFile (signed by the data
// directory's root, as weir ca sign-intermediate makes it) as the issuer
// id: the data directory's ca/issuers/ID files, which an entry of
// ca.issuers with that id and no cert-file uses. Its key is keyFile, a
// plaintext key unless ca.issuers already has the entry, whose signer
// then says (none for pkcs11). It replaces the files of an existing
// issuer id only while the store holds no unexpired certificate of it
// (checkReplaceable), and keeps them beside, renamed with the time. weir
// serve signs with it from its next start once the
// entry is in ca.issuers, and issues with it once ca.active-issuer names
// it.
func AddIssuer(ctx context.Context, cfg Config, id, certFile, keyFile string, now time.Time) ([]string, error) {
	if !acme.IssuerIDPattern.MatchString(id) || id == acme.DefaultIssuer {
		return nil, fmt.Errorf("the issuer's id %q must be lowercase letters, digits and hyphens (up to 32), and not %q", id, acme.DefaultIssuer)
	}
	key, sc := "ca.issuers (no entry for "+id+" yet)", ca.SignerConfig{Type: ca.SignerFile}
	for i, is := range cfg.CA.Issuers {
		if is.ID != id {
			continue
		}
		if is.CertFile != "" {
			return nil, fmt.Errorf("ca.issuers[%d].cert-file is set (%s): weir signs with that file, so replace it there instead", i, is.CertFile)
		}
		key, sc = fmt.Sprintf("ca.issuers[%d]", i), is.Signer
	}
	slot := intermediateSlot{id: id, key: key, signer: sc, certName: issuerCertFile(id), keyName: issuerKeyFile(id)}
	return installIntermediate(ctx, cfg, slot, certFile, keyFile, now)
}
