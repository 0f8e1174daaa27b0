// SPDX-License-Identifier: Apache-2.0

package server

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/challenge"
	"github.com/weir-pki/weir/web"
)

// The draft challenge types: dns-account-01 (draft-ietf-acme-dns-account-label)
// and dns-persist-01 (draft-ietf-acme-dns-persist-02), off unless enabled.

// PersistChallenge is the challenges.dns-persist-01 block.
type PersistChallenge struct {
	Enabled *bool `yaml:"enabled"`
	// IssuerDomainNames are the names by which dns-persist-01 records
	// name weir (lower case, no trailing dot, 1 to 10); empty means the
	// host of server.external-url.
	IssuerDomainNames []string `yaml:"issuer-domain-names"`
}

// challengeTypes says which challenge types cfg enables.
func challengeTypes(cfg Config) map[acme.ChallengeType]bool {
	ch := cfg.Challenges
	return map[acme.ChallengeType]bool{
		acme.ChallengeHTTP01:       enabled(ch.HTTP01.Enabled),
		acme.ChallengeDNS01:        enabled(ch.DNS01.Enabled),
		acme.ChallengeTLSALPN01:    enabled(ch.TLSALPN01.Enabled),
		acme.ChallengeDNSAccount01: enabled(ch.DNSAccount01.Enabled),
		acme.ChallengeDNSPersist01: enabled(ch.DNSPersist01.Enabled),
	}
}

// offeredChallenges are the challenge types cfg enables, in the order
// authorizations list them.
func offeredChallenges(cfg Config) []acme.ChallengeType {
	on := challengeTypes(cfg)
	var out []acme.ChallengeType
	for _, t := range acme.AllChallengeTypes() {
		if on[t] {
			out = append(out, t)
		}
	}
	return out
}

// issuerDomainNames are dns-persist-01's issuer domain names:
// challenges.dns-persist-01.issuer-domain-names, else the host of the
// external URL (none when it is an IP address).
func (c Config) issuerDomainNames() []string {
	if names := c.Challenges.DNSPersist01.IssuerDomainNames; len(names) > 0 {
		return names
	}
	u, err := url.Parse(externalURL(c))
	if err != nil || u.Hostname() == "" || net.ParseIP(u.Hostname()) != nil {
		return nil
	}
	return []string{strings.ToLower(u.Hostname())}
}

// persistConfig is the validator's dns-persist-01 configuration.
func (c Config) persistConfig() challenge.PersistConfig {
	return challenge.PersistConfig{IssuerDomainNames: c.issuerDomainNames(), AccountHashPrefix: web.AccountHashPrefix(externalURL(c))}
}

// directoryPersist is what the directory's meta says of dns-persist-01:
// its issuer domain names and account hash prefix, when it is enabled.
func (c Config) directoryPersist() web.PersistMeta {
	if !enabled(c.Challenges.DNSPersist01.Enabled) {
		return web.PersistMeta{}
	}
	return web.PersistMeta{IssuerDomainNames: c.issuerDomainNames(), AccountHashPrefix: web.AccountHashPrefix(externalURL(c))}
}

// validateDrafts checks the dns-persist-01 block when it is enabled: its
// issuer domain names, and that each is among the directory's
// caaIdentities when weir advertises any (draft-ietf-acme-dns-persist-02
// §3.2).
func (c Config) validateDrafts() []error {
	if !enabled(c.Challenges.DNSPersist01.Enabled) {
		return nil
	}
	const key = "challenges.dns-persist-01.issuer-domain-names"
	names := c.issuerDomainNames()
	if len(names) == 0 {
		return []error{fmt.Errorf("%s: server.external-url has no host name to derive one from; list weir's issuer domain names", key)}
	}
	var errs []error
	for _, err := range challenge.CheckIssuerDomainNames(names) {
		errs = append(errs, fmt.Errorf("%s: %w", key, err))
	}
	if ids := c.directoryCAAIdentities(); len(ids) > 0 {
		for _, n := range names {
			if !slices.ContainsFunc(ids, func(id string) bool { return strings.EqualFold(strings.TrimSuffix(id, "."), n) }) {
				errs = append(errs, fmt.Errorf("%s: %q is not among the directory's caaIdentities (acme.caa-identities, else challenges.caa.identities), as each must be", key, n))
			}
		}
	}
	return errs
}
