// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Incident mode: when keys are compromised or an intermediate must go,
// every affected certificate has to be replaced now. weir moves their ARI
// windows into the past (revocation does so too), so ARI-polling clients
// renew at their next poll, and reserves capacity for that wave: a renewal
// that replaces such a certificate is exempt from every account-level
// limit, once per certificate (a second replacement is alreadyReplaced).

// IncidentScope selects the certificates of an incident.
type IncidentScope struct {
	// AccountID takes every active certificate of one account.
	AccountID AccountID
	// Serials takes these certificates.
	Serials []string
	// All takes every active certificate of the CA.
	All bool
}

// incidentWindow is the window of a certificate in an incident: in the
// past, so RFC 9773 clients renew immediately.
func incidentWindow(now time.Time) (time.Time, time.Time) {
	return now.Add(-2 * time.Hour), now.Add(-time.Hour)
}

// activeInScope lists the active certificates a scope selects.
func (s *Service) activeInScope(ctx context.Context, sc IncidentScope) ([]*Certificate, error) {
	n := 0
	if sc.AccountID != "" {
		n++
	}
	if len(sc.Serials) > 0 {
		n++
	}
	if sc.All {
		n++
	}
	if n != 1 {
		return nil, Malformed("name exactly one of an account, serials or all")
	}
	now := s.now().UTC()
	if len(sc.Serials) > 0 {
		var out []*Certificate
		for _, serial := range sc.Serials {
			c, err := s.store.GetCertificate(ctx, serial)
			if err != nil {
				return nil, storeErr(err, "certificate %s", serial)
			}
			if !c.Revoked() && c.NotAfter.After(now) {
				out = append(out, c)
			}
		}
		return out, nil
	}
	inv, ok := s.Inventory()
	if !ok {
		return nil, errors.New("acme: incident mode needs the store's inventory")
	}
	var out []*Certificate
	cursor := ""
	for range 100000 {
		page, next, err := inv.ListCertificates(ctx, CertQuery{AccountID: sc.AccountID, State: CertActive, Now: now, Cursor: cursor, Limit: 500})
		if err != nil {
			return nil, Internal(err)
		}
		out = append(out, page...)
		if next == "" {
			return out, nil
		}
		cursor = next
	}
	return nil, fmt.Errorf("acme: incident scope: too many pages")
}

// RenewNow moves the ARI windows of the scope's active certificates into
// the past (a mass renewal without revocation, e.g. before retiring an
// intermediate) and returns them.
func (s *Service) RenewNow(ctx context.Context, sc IncidentScope) ([]*Certificate, error) {
	certs, err := s.activeInScope(ctx, sc)
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		return nil, nil
	}
	now := s.now().UTC()
	start, end := incidentWindow(now)
	serials := make([]string, len(certs))
	for i, c := range certs {
		serials[i] = c.Serial
	}
	if err := s.store.SetRenewalWindows(ctx, serials, start, end, now); err != nil {
		return nil, Internal(err)
	}
	for _, c := range certs {
		s.unplan(c)
		c.RenewalStart, c.RenewalEnd = start, end
	}
	s.log.Warn("incident: renewal windows moved into the past", "certificates", len(certs))
	return certs, nil
}

// RevokeAll revokes the scope's active certificates with reason; their
// windows are in the past from then on. It returns the revoked ones and
// stops at the first failure.
func (s *Service) RevokeAll(ctx context.Context, sc IncidentScope, reason int) ([]*Certificate, error) {
	if p := operatorReasonProblem(reason); p != nil {
		return nil, p
	}
	certs, err := s.activeInScope(ctx, sc)
	if err != nil {
		return nil, err
	}
	var done []*Certificate
	for _, c := range certs {
		// markRevoked records the revocation on c too, so c is listed
		// as it is now: revoked, with its reason.
		if err := s.markRevoked(ctx, c, reason); err != nil {
			if p, ok := err.(*Problem); ok && p.Type == ProbAlreadyRevoked {
				continue
			}
			return done, err
		}
		done = append(done, c)
	}
	s.log.Warn("incident: certificates revoked", "certificates", len(done), "reason", reason)
	return done, nil
}

// urgentReplacement reports whether a certificate being replaced is in an
// incident: revoked, its window moved into the past, or its issuer's
// holders told to renew early (Live.RenewEarly).
func (s *Service) urgentReplacement(c *Certificate) bool {
	return c.Revoked() || c.RenewNow || s.renewEarly(c.Issuer)
}
