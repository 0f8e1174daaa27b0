// SPDX-License-Identifier: Apache-2.0

package web

import (
	"encoding/json"
	"time"

	"github.com/weir-pki/weir/acme"
)

// The JSON representations of RFC 8555 §7.1.

type directoryView struct {
	NewNonce   string `json:"newNonce"`
	NewAccount string `json:"newAccount"`
	NewOrder   string `json:"newOrder"`
	RevokeCert string `json:"revokeCert"`
	KeyChange  string `json:"keyChange"`
	// RenewalInfo is the ARI resource (RFC 9773 §3).
	RenewalInfo string   `json:"renewalInfo"`
	Meta        metaView `json:"meta"`
}

type metaView struct {
	TermsOfService          string   `json:"termsOfService,omitempty"`
	Website                 string   `json:"website,omitempty"`
	CAAIdentities           []string `json:"caaIdentities,omitempty"`
	ExternalAccountRequired bool     `json:"externalAccountRequired"`
	// Quota is the URL of the quota resource: the signing account's rate
	// limit buckets, fetched with POST-as-GET (docs/rate-limits.md).
	Quota string `json:"quota,omitempty"`
	// Profiles maps each certificate profile offered to its description
	// (draft-aaron-acme-profiles §3).
	Profiles map[string]string `json:"profiles,omitempty"`
	// IssuerDomainNames and AccountHashPrefix are what a client needs to
	// write a dns-persist-01 record before any order
	// (draft-ietf-acme-dns-persist-02 §3.2, §4.1).
	IssuerDomainNames []string `json:"issuerDomainNames,omitempty"`
	AccountHashPrefix string   `json:"accountHashPrefix,omitempty"`
}

type accountView struct {
	Status  acme.Status     `json:"status"`
	Contact []string        `json:"contact,omitempty"`
	Orders  string          `json:"orders"`
	Key     json.RawMessage `json:"key,omitempty"`
}

func (s *Server) accountView(a *acme.Account) accountView {
	return accountView{Status: a.Status, Contact: a.Contact, Orders: s.urls.orders(a.ID), Key: a.Key}
}

type orderView struct {
	Status         acme.Status       `json:"status"`
	Expires        string            `json:"expires"`
	Identifiers    []acme.Identifier `json:"identifiers"`
	NotBefore      string            `json:"notBefore,omitempty"`
	NotAfter       string            `json:"notAfter,omitempty"`
	Error          *acme.Problem     `json:"error,omitempty"`
	Authorizations []string          `json:"authorizations"`
	Finalize       string            `json:"finalize"`
	Certificate    string            `json:"certificate,omitempty"`
	// Profile is the certificate profile the order is issued under
	// (draft-aaron-acme-profiles §4).
	Profile string `json:"profile,omitempty"`
	// Replaces is the ARI identifier of the certificate this order renews
	// (RFC 9773 §5).
	Replaces string `json:"replaces,omitempty"`
}

// timeString formats t as RFC 3339, or "" when zero.
func timeString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func (s *Server) orderView(o *acme.Order) orderView {
	v := orderView{
		Status: o.Status, Expires: timeString(o.Expires), Identifiers: o.Identifiers,
		NotBefore: timeString(o.NotBefore), NotAfter: timeString(o.NotAfter), Error: o.Error,
		Finalize: s.urls.finalize(o.ID), Authorizations: make([]string, len(o.AuthzIDs)),
		Profile:  o.Profile,
		Replaces: o.Replaces,
	}
	for i, id := range o.AuthzIDs {
		v.Authorizations[i] = s.urls.authz(id)
	}
	if o.Status == acme.StatusValid && o.CertSerial != "" {
		v.Certificate = s.urls.certificate(o.CertSerial)
	}
	return v
}

type authzView struct {
	Identifier acme.Identifier `json:"identifier"`
	Status     acme.Status     `json:"status"`
	Expires    string          `json:"expires"`
	Challenges []challengeView `json:"challenges"`
	Wildcard   bool            `json:"wildcard,omitempty"`
}

func (s *Server) authzView(a *acme.Authorization) authzView {
	v := authzView{Identifier: a.Identifier, Status: a.Status, Expires: timeString(a.Expires), Wildcard: a.Wildcard,
		Challenges: make([]challengeView, 0, len(a.Challenges))}
	for _, c := range a.Challenges {
		v.Challenges = append(v.Challenges, s.challengeView(c))
	}
	return v
}

type challengeView struct {
	Type      acme.ChallengeType `json:"type"`
	URL       string             `json:"url"`
	Status    acme.Status        `json:"status"`
	Token     string             `json:"token"`
	Validated string             `json:"validated,omitempty"`
	Error     *acme.Problem      `json:"error,omitempty"`
	// IssuerDomainNames are the CA's names a dns-persist-01 record may
	// use, under both spellings of the member: "issuer-domain-names", as
	// the drafts up to -01 and the clients that implement the challenge
	// (lego, eggsampler/acme, cert-manager) read it, and
	// "issuerDomainNames" (draft-ietf-acme-dns-persist-02 §3.1).
	IssuerDomainNames      []string `json:"issuer-domain-names,omitempty"`
	IssuerDomainNamesCamel []string `json:"issuerDomainNames,omitempty"`
}

func (s *Server) challengeView(c *acme.Challenge) challengeView {
	v := challengeView{Type: c.Type, URL: s.urls.challenge(c.ID), Status: c.Status, Token: c.Token,
		Validated: timeString(c.Validated), Error: c.Error}
	if c.Type == acme.ChallengeDNSPersist01 {
		v.IssuerDomainNames = s.cfg.Persist.IssuerDomainNames
		v.IssuerDomainNamesCamel = s.cfg.Persist.IssuerDomainNames
	}
	return v
}
