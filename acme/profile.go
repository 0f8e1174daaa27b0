// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/weir-pki/weir/ca"
)

// Certificate profiles, as Let's Encrypt serves them
// (draft-aaron-acme-profiles): the directory's meta.profiles names them,
// a new order may ask for one by name, and the order and its certificate
// remember which one they were issued under.

// KeyUsage names an extended key usage a profile may put in certificates.
type KeyUsage string

// The extended key usages a profile may choose from (RFC 5280 §4.2.1.12).
const (
	KeyUsageServerAuth KeyUsage = "serverAuth"
	KeyUsageClientAuth KeyUsage = "clientAuth"
)

// extKeyUsage is the x509 value of u.
func (u KeyUsage) extKeyUsage() (x509.ExtKeyUsage, bool) {
	switch u {
	case KeyUsageServerAuth:
		return x509.ExtKeyUsageServerAuth, true
	case KeyUsageClientAuth:
		return x509.ExtKeyUsageClientAuth, true
	}
	return 0, false
}

// ProfileConfig is one certificate profile, an entry of the ca.profiles
// block of the configuration. A key left out gets the default its comment
// names.
type ProfileConfig struct {
	// Description is shown to clients in the directory's meta.profiles.
	Description string `yaml:"description"`
	// CertificateLifetime is the validity period of the profile's
	// certificates and the most an order's notBefore/notAfter may ask
	// for. Left out: the CA's default lifetime (ca.certificate-lifetime).
	CertificateLifetime *time.Duration `yaml:"certificate-lifetime"`
	// KeyUsages are the extended key usages: serverAuth, clientAuth or
	// both. Left out: serverAuth.
	KeyUsages []KeyUsage `yaml:"key-usages"`
	// IdentifierTypes are the identifier types an order under the profile
	// may have: dns, ip or both. Left out: both. IP addresses also need
	// ca.policy.allowed-ip-ranges.
	IdentifierTypes []IdentifierType `yaml:"identifier-types"`
	// CommonName is none (no subject CN, names in the SAN only) or
	// first-name (the CSR's CN, else the first DNS name, when it fits 64
	// characters). Left out: none.
	CommonName ca.CommonNamePolicy `yaml:"common-name"`
}

// maxProfileName bounds a profile name; it travels in JSON and logs.
const maxProfileName = 64

// checkProfileName accepts names of letters, digits, '-', '_' and '.',
// starting with a letter or digit.
func checkProfileName(name string) error {
	if name == "" {
		return errors.New("a profile name must not be empty")
	}
	if len(name) > maxProfileName {
		return fmt.Errorf("the name is %d characters; at most %d allowed", len(name), maxProfileName)
	}
	for i, r := range name {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || r != '-' && r != '_' && r != '.') {
			return fmt.Errorf("the name %q may only hold letters, digits, '-', '_' and '.', starting with a letter or digit", name)
		}
	}
	return nil
}

// ValidateProfiles reports every problem of the ca.default-profile and
// ca.profiles keys at once, each naming its key. No profiles and no
// default is valid: orders then ask for none and get the CA's defaults.
func ValidateProfiles(defaultName string, profiles map[string]ProfileConfig) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	names := sortedProfileNames(profiles)
	switch {
	case defaultName == "" && len(profiles) > 0:
		add("ca.default-profile: must name one of ca.profiles (%s), the profile of orders that ask for none", strings.Join(names, ", "))
	case defaultName != "" && len(profiles) == 0:
		add("ca.profiles: is empty, but ca.default-profile names %q; add that profile, or set ca.default-profile to \"\" to offer none", defaultName)
	case defaultName != "":
		if _, ok := profiles[defaultName]; !ok {
			add("ca.default-profile: %q is not among ca.profiles (%s)", defaultName, strings.Join(names, ", "))
		}
	}
	for _, name := range names {
		pc := profiles[name]
		key := "ca.profiles." + name
		if err := checkProfileName(name); err != nil {
			add("%s: %v", key, err)
		}
		if l := pc.CertificateLifetime; l != nil && *l <= 0 {
			add("%s.certificate-lifetime: must be a positive duration, got %s (leave it out for ca.certificate-lifetime)", key, *l)
		}
		if pc.KeyUsages != nil && len(pc.KeyUsages) == 0 {
			add("%s.key-usages: must list serverAuth, clientAuth or both (leave it out for serverAuth)", key)
		}
		for i, u := range pc.KeyUsages {
			if _, ok := u.extKeyUsage(); !ok {
				add("%s.key-usages[%d]: %q is not serverAuth or clientAuth", key, i, u)
			} else if slices.Contains(pc.KeyUsages[:i], u) {
				add("%s.key-usages[%d]: %q is listed twice", key, i, u)
			}
		}
		if pc.IdentifierTypes != nil && len(pc.IdentifierTypes) == 0 {
			add("%s.identifier-types: must list dns, ip or both (leave it out for both)", key)
		}
		for i, t := range pc.IdentifierTypes {
			if t != IdentifierDNS && t != IdentifierIP {
				add("%s.identifier-types[%d]: %q is not dns or ip", key, i, t)
			} else if slices.Contains(pc.IdentifierTypes[:i], t) {
				add("%s.identifier-types[%d]: %q is listed twice", key, i, t)
			}
		}
		switch pc.CommonName {
		case "", ca.CommonNameNone, ca.CommonNameFirstName:
		default:
			add("%s.common-name: %q is not %s or %s", key, pc.CommonName, ca.CommonNameNone, ca.CommonNameFirstName)
		}
	}
	return errors.Join(errs...)
}

// Profile is a compiled certificate profile: what certificates issued
// under it look like and which identifiers their orders may have.
type Profile struct {
	Name        string
	Description string
	// Lifetime is the certificates' validity period and the most an
	// order may ask for.
	Lifetime        time.Duration
	KeyUsages       []KeyUsage
	IdentifierTypes []IdentifierType
	CommonName      ca.CommonNamePolicy
}

// allows reports whether orders under the profile may name identifiers of
// type t.
func (p *Profile) allows(t IdentifierType) bool { return slices.Contains(p.IdentifierTypes, t) }

// checkIdentifiers refuses the identifiers whose type the profile does not
// allow, one subproblem each (RFC 8555 §6.7.1).
func (p *Profile) checkIdentifiers(idents []Identifier) *Problem {
	if p == nil {
		return nil
	}
	var probs []*Problem
	for _, id := range idents {
		if !p.allows(id.Type) {
			probs = append(probs, NewProblem(ProbRejectedIdentifier,
				"profile %q does not issue for %s identifiers (it allows %s)", p.Name, id.Type, joinTypes(p.IdentifierTypes)).WithIdentifier(id))
		}
	}
	return combine(ProbRejectedIdentifier, fmt.Sprintf("profile %q does not allow some identifiers of this order", p.Name), probs)
}

func joinTypes(ts []IdentifierType) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// extKeyUsages is the profile's key usages as x509 values.
func (p *Profile) extKeyUsages() []x509.ExtKeyUsage {
	out := make([]x509.ExtKeyUsage, 0, len(p.KeyUsages))
	for _, u := range p.KeyUsages {
		if eku, ok := u.extKeyUsage(); ok {
			out = append(out, eku)
		}
	}
	return out
}

// LeafEKUs are the extended key usages the profiles put in certificates,
// each with the key of the profile that does: what the intermediate
// that signs them must allow (ca.CheckLeafEKUs). With no profiles, the
// CA's default.
func (ps *Profiles) LeafEKUs() []ca.LeafEKU {
	if len(ps.Names()) == 0 {
		return []ca.LeafEKU{{EKU: ca.DefaultExtKeyUsage, By: "ca.profiles (none: the CA's default)"}}
	}
	var out []ca.LeafEKU
	for _, name := range ps.names {
		for _, eku := range ps.byName[name].extKeyUsages() {
			out = append(out, ca.LeafEKU{EKU: eku, By: "ca.profiles." + name + ".key-usages"})
		}
	}
	return out
}

// name is the profile's name, "" for no profile.
func (p *Profile) name() string {
	if p == nil {
		return ""
	}
	return p.Name
}

// Profiles is the set of certificate profiles a server offers and the
// default one. It is immutable; a reload swaps in a new one
// (Service.SetLive). The nil *Profiles offers none.
type Profiles struct {
	def    string
	byName map[string]*Profile
	names  []string // sorted
}

// NewProfiles compiles a validated configuration. defaultLifetime is the
// lifetime of profiles that leave certificate-lifetime out
// (ca.certificate-lifetime).
func NewProfiles(defaultName string, cfg map[string]ProfileConfig, defaultLifetime time.Duration) (*Profiles, error) {
	if err := ValidateProfiles(defaultName, cfg); err != nil {
		return nil, err
	}
	ps := &Profiles{def: defaultName, byName: make(map[string]*Profile, len(cfg)), names: sortedProfileNames(cfg)}
	for _, name := range ps.names {
		pc := cfg[name]
		p := &Profile{
			Name: name, Description: pc.Description, Lifetime: defaultLifetime,
			KeyUsages:       slices.Clone(pc.KeyUsages),
			IdentifierTypes: slices.Clone(pc.IdentifierTypes),
			CommonName:      pc.CommonName,
		}
		if pc.CertificateLifetime != nil {
			p.Lifetime = *pc.CertificateLifetime
		}
		if p.Lifetime <= 0 {
			return nil, fmt.Errorf("ca.profiles.%s.certificate-lifetime: left out, and the default lifetime %s is not positive", name, defaultLifetime)
		}
		if p.KeyUsages == nil {
			p.KeyUsages = []KeyUsage{KeyUsageServerAuth}
		}
		if p.IdentifierTypes == nil {
			p.IdentifierTypes = []IdentifierType{IdentifierDNS, IdentifierIP}
		}
		if p.CommonName == "" {
			p.CommonName = ca.CommonNameNone
		}
		ps.byName[name] = p
	}
	return ps, nil
}

func sortedProfileNames(m map[string]ProfileConfig) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Default is the name of the profile of orders that ask for none; "" when
// no profiles are offered.
func (ps *Profiles) Default() string {
	if ps == nil {
		return ""
	}
	return ps.def
}

// Names lists the offered profiles, sorted.
func (ps *Profiles) Names() []string {
	if ps == nil {
		return nil
	}
	return slices.Clone(ps.names)
}

// Get returns the profile called name.
func (ps *Profiles) Get(name string) (*Profile, bool) {
	if ps == nil {
		return nil, false
	}
	p, ok := ps.byName[name]
	return p, ok
}

// Descriptions maps each offered profile to its description: the
// directory's meta.profiles (draft-aaron-acme-profiles §3). Nil when none
// are offered.
func (ps *Profiles) Descriptions() map[string]string {
	if ps == nil || len(ps.names) == 0 {
		return nil
	}
	m := make(map[string]string, len(ps.names))
	for _, n := range ps.names {
		m[n] = ps.byName[n].Description
	}
	return m
}

// resolve returns the profile an order asking for name is issued under:
// the default for "", and nil (the CA's defaults) when no profiles are
// offered and none is asked for. A name that is not offered is an
// invalidProfile problem listing the offered ones.
func (ps *Profiles) resolve(name string) (*Profile, *Problem) {
	if name == "" {
		name = ps.Default()
		if name == "" {
			return nil, nil
		}
	}
	if p, ok := ps.Get(name); ok {
		return p, nil
	}
	if len(ps.Names()) == 0 {
		return nil, NewProblem(ProbInvalidProfile, "profile %q is not offered: this server offers no profiles", name)
	}
	return nil, NewProblem(ProbInvalidProfile, "profile %q is not offered; this server offers %s", name, strings.Join(ps.Names(), ", "))
}

// Profiles returns the certificate profiles in force.
func (s *Service) Profiles() *Profiles { return s.rules().Profiles }

// maxLifetime is the longest validity an order under p may ask for.
func (s *Service) maxLifetime(p *Profile) time.Duration {
	if p == nil {
		return s.ca.Config().Lifetime
	}
	return p.Lifetime
}

// profileRequest sets what profile p decides in an issuance request; the
// CSR's common name, when it is one of the DNS names, goes first so that
// the first-name policy picks it.
func profileRequest(req *ca.IssueRequest, p *Profile, csr *x509.CertificateRequest) {
	if p == nil {
		return
	}
	req.Lifetime = p.Lifetime
	req.ExtKeyUsages = p.extKeyUsages()
	req.CommonName = p.CommonName
	if cn := csr.Subject.CommonName; cn != "" && p.CommonName == ca.CommonNameFirstName {
		if id, prob := canonicalIdentifier(Identifier{Type: IdentifierDNS, Value: cn}); prob == nil {
			if i := slices.Index(req.DNSNames, id.Value); i > 0 {
				req.DNSNames = append(append([]string{id.Value}, req.DNSNames[:i]...), req.DNSNames[i+1:]...)
			}
		}
	}
}
