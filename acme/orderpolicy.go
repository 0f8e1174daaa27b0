package acme

import "time"

// admitOrder is the one place where the CA's live rules decide whether it
// issues for an order: the naming policy and the CA's name constraints for
// each identifier (checkIdentifier), the profile the order is issued under
// ("" is the default one), the identifier types that profile allows, and
// its longest lifetime for a requested notAfter. It returns the profile.
//
// NewOrder admits a request with it; Finalize and resumeFinalize admit
// the order again with the rules in force then, because a live reload
// (SetLive) may have changed them in the up to OrderLifetime between the
// two.
func (s *Service) admitOrder(idents []Identifier, profileName string, nb, na time.Time) (*Profile, *Problem) {
	rules := s.rules()
	var probs []*Problem
	for _, id := range idents {
		if p := s.checkIdentifier(rules.Policy, id); p != nil {
			probs = append(probs, p)
		}
	}
	if p := combine(ProbRejectedIdentifier, "policy forbids some identifiers of this order", probs); p != nil {
		return nil, p
	}
	// draft-aaron-acme-profiles §4: no profile means the default one.
	profile, p := rules.Profiles.resolve(profileName)
	if p != nil {
		return nil, p
	}
	if p := profile.checkIdentifiers(idents); p != nil {
		return nil, p
	}
	if p := s.checkLifetime(nb, na, profile); p != nil {
		return nil, p
	}
	return profile, nil
}

// checkLifetime refuses a notAfter further from notBefore (or from now,
// without one) than the longest lifetime under profile.
func (s *Service) checkLifetime(nb, na time.Time, profile *Profile) *Problem {
	if na.IsZero() {
		return nil
	}
	start := nb
	if start.IsZero() {
		start = s.now()
	}
	if maxLife := s.maxLifetime(profile); na.Sub(start) > maxLife {
		return Malformed("the requested validity of %s exceeds the maximum certificate lifetime of %s", na.Sub(start), maxLife)
	}
	return nil
}

// readmitOrder is admitOrder for an order being finalized, created under
// the rules in force at its new-order. A refusal is the problem new-order
// would give now, with the reason the order can no longer be finalized.
func (s *Service) readmitOrder(o *Order) (*Profile, *Problem) {
	profile, p := s.admitOrder(o.Identifiers, o.Profile, o.NotBefore, o.NotAfter)
	if p != nil {
		p.Detail += "; the CA's policy or profiles changed after this order was created, so it cannot be finalized: create a new order"
		return nil, p
	}
	return profile, nil
}
