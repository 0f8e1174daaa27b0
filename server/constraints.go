// SPDX-License-Identifier: Apache-2.0

package server

import (
	"errors"
	"log/slog"
	"strings"

	"github.com/weir-pki/weir/ca"
)

// warnConstraints logs what ca.name-constraints and the CA's name
// constraints mean for the running configuration: the option left without
// effect on a CA that was not generated with it, and each allowed domain
// or IP range of the policy that the constraints do not permit (orders
// for its names are refused: their certificates would not verify).
func warnConstraints(log *slog.Logger, c CAConfig, h *ca.Hierarchy, created bool) {
	if c.NameConstraints && !created && !h.Constrained() {
		log.Warn("ca.name-constraints has no effect: the CA in use carries no name constraints (they are set when weir generates its root and intermediate)")
	}
	if !h.Constrained() {
		return
	}
	if len(c.Policy.AllowedDomains) == 0 && !h.PermitsDNS("any-name.invalid") {
		log.Warn("ca.policy.allowed-domains is empty (every domain) but the CA's name constraints permit only some; orders for the others are refused")
	}
	for i, d := range c.Policy.AllowedDomains {
		if !h.PermitsDNS(strings.ToLower(strings.Trim(d, "."))) {
			log.Warn("ca.policy.allowed-domains names a domain the CA's name constraints do not permit; orders for it are refused",
				"index", i, "domain", d)
		}
	}
	for i, r := range c.Policy.AllowedIPRanges {
		if n := ipNets(r); len(n) == 1 && !h.PermitsIP(n[0].IP) {
			log.Warn("ca.policy.allowed-ip-ranges names a range the CA's name constraints do not permit; orders for it are refused",
				"index", i, "range", r)
		}
	}
}

// validateNameConstraints checks ca.name-constraints: it needs a policy to
// put into the CA, and applies only to a CA weir generates.
func (c CAConfig) validateNameConstraints() []error {
	if !c.NameConstraints {
		return nil
	}
	var errs []error
	if len(c.Policy.AllowedDomains) == 0 && len(c.Policy.AllowedIPRanges) == 0 {
		errs = append(errs, errors.New("ca.name-constraints: needs ca.policy.allowed-domains or ca.policy.allowed-ip-ranges to constrain the CA to"))
	}
	if c.Intermediate.CertFile != "" {
		errs = append(errs, errors.New("ca.name-constraints: applies to a root and intermediate weir generates, not to ca.intermediate"))
	}
	return errs
}
