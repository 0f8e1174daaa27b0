// SPDX-License-Identifier: Apache-2.0

package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// artefact is a public, signed artefact of the CA: what relying parties
// fetch, with no trust established first (RFC 5280 §4.2.1.13 and
// §4.2.2.1 name HTTP for CRL distribution points and caIssuers). Each is
// served to GET and HEAD, with the same headers, on the ACME listener and
// on the plain-HTTP listener (ArtefactHandler).
type artefact struct {
	// path is the route, name the observer's endpoint, contentType the
	// body's media type.
	path, name, contentType string
	// body is the artefact the request names; nil or empty is a 503.
	body func(*http.Request) []byte
	// found, when set, says whether there is such an artefact: a 404 when
	// not (an issuer or CRL shard weir does not have, no root CRL).
	found func(*http.Request) bool
}

// artefacts are the public artefacts, one line each.
func (s *Server) artefacts() []artefact {
	return []artefact{
		{"/root.pem", "root-pem", "application/x-pem-file", func(*http.Request) []byte { return s.cfg.RootPEM }, nil},
		{pathRootCRL, "root-crl", "application/pkix-crl", s.rootCRL, func(r *http.Request) bool { return len(s.rootCRL(r)) > 0 }},
		{pathIntermediate, "intermediate", "application/pkix-cert", func(*http.Request) []byte { return s.svc.IssuerCertificate("") }, nil},
		{pathCRL, "crl", "application/pkix-crl", s.currentCRL, nil},
		{pathIssuerCRL + "{issuer}", "crl", "application/pkix-crl", s.issuerCRL, s.ofIssuer},
		{pathIssuerCRL + "{issuer}/{shard}", "crl", "application/pkix-crl", s.issuerCRL, s.ofIssuer},
		{pathIssuerCert + "{issuer}", "intermediate", "application/pkix-cert", func(r *http.Request) []byte {
			return s.svc.IssuerCertificate(chi.URLParam(r, "issuer"))
		}, s.ofIssuer},
	}
}

// rootCRL is the root's CRL that Config.RootCRL gives; nil without one.
func (s *Server) rootCRL(*http.Request) []byte {
	if s.cfg.RootCRL == nil {
		return nil
	}
	return s.cfg.RootCRL()
}

// routeArtefacts registers every artefact on r, for GET and HEAD.
func (s *Server) routeArtefacts(r chi.Router) {
	for _, a := range s.artefacts() {
		h := s.static(a.name, a.contentType, a.body)
		if a.found != nil {
			serve := h
			h = func(w http.ResponseWriter, r *http.Request) {
				if !a.found(r) {
					http.NotFound(w, r)
					return
				}
				serve(w, r)
			}
		}
		r.Get(a.path, h)
		r.Head(a.path, h)
	}
	if s.cfg.TransparencyLog != nil {
		r.Mount(PathLog, http.StripPrefix(PathLog, s.cfg.TransparencyLog))
	}
}

// ArtefactHandler is the route table of the plain-HTTP listener: the
// public artefacts, as the ACME listener serves them, and nothing else:
// no ACME resource, no health, no nonce; 404 for any other path and 405
// for any other method.
func (s *Server) ArtefactHandler() http.Handler {
	r := chi.NewRouter()
	r.NotFound(http.NotFound)
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "method not allowed: GET or HEAD", http.StatusMethodNotAllowed)
	})
	s.routeArtefacts(r)
	return r
}
