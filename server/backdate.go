// SPDX-License-Identifier: Apache-2.0

package server

import (
	"fmt"

	"github.com/weir-pki/weir/ca"
)

// Certificates are backdated: one whose order asks for no validity
// period starts ca.backdate before it is signed, so that a client whose
// clock runs a little slow accepts it at once, and it lasts its lifetime
// from there (it ends as much sooner). The default, one minute (as
// step-ca), covers the skew of clocks kept by NTP and of machines just
// resumed, and spends a negligible part of even a short-lived profile's
// lifetime; Boulder's hour suits the public web's clients, whose clocks
// weir's internal ones need not match. ca.backdate reloads live, as the
// profiles' lifetimes do.

// validateBackdate checks ca.backdate against the lifetimes it applies
// to: ca.certificate-lifetime and each profile's (left out, the former).
// It may be 0 (no backdate), and at most ca.BackdateLimit of the shortest
// of them: half of it, and never more than ca.MaxBackdate.
func (c CAConfig) validateBackdate() []error {
	if c.Backdate < 0 {
		return []error{fmt.Errorf("ca.backdate: must not be negative (0 does not backdate), got %s", c.Backdate)}
	}
	key, life := "ca.certificate-lifetime", c.CertificateLifetime
	for _, name := range sortedKeys(c.Profiles) {
		if l := c.Profiles[name].CertificateLifetime; l != nil && *l > 0 && (*l < life || life <= 0) {
			key, life = "ca.profiles."+name+".certificate-lifetime", *l
		}
	}
	if life <= 0 {
		return nil // reported under its own key
	}
	if limit := ca.BackdateLimit(life); c.Backdate > limit {
		return []error{fmt.Errorf("ca.backdate: %s is more than %s, the most a certificate of the shortest lifetime (%s, %s) is backdated: "+
			"half its lifetime, and at most %s", c.Backdate, limit, key, life, ca.MaxBackdate)}
	}
	return nil
}
