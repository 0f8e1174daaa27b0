// SPDX-License-Identifier: Apache-2.0

package web

import (
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/jws"
)

// pollAfter is the Retry-After sent while something is still processing.
const pollAfter = time.Second

func (s *Server) directory(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, directoryView{
		NewNonce: s.urls.path(pathNewNonce), NewAccount: s.urls.path(pathNewAccount),
		NewOrder: s.urls.path(pathNewOrder), RevokeCert: s.urls.path(pathRevoke),
		KeyChange: s.urls.path(pathKeyChange), RenewalInfo: s.urls.path(pathRenewalInfo),
		Meta: metaView{TermsOfService: s.cfg.TermsOfService, Website: s.cfg.Website,
			CAAIdentities: s.cfg.CAAIdentities, Profiles: s.profiles(),
			IssuerDomainNames: s.cfg.Persist.IssuerDomainNames, AccountHashPrefix: s.cfg.Persist.AccountHashPrefix,
			ExternalAccountRequired: s.svc.Config().EAB.Required, Quota: s.quotaURL()},
	})
}

// newNonce answers HEAD with 200 and GET with 204 (RFC 8555 §7.2), and a
// POST-as-GET, which §7.2 gives no status of its own, with 200 as HEAD
// (Boulder and Pebble do the same); wrap has already set Replay-Nonce. When wrap could not issue one, it answers
// 503 serverInternal with a Retry-After: a success without a nonce would
// leave the client nothing to sign with, and a nonce of this replica's
// own would not redeem on the others.
func (s *Server) newNonce(w http.ResponseWriter, r *http.Request) error {
	if rec, ok := w.(*statusRecorder); ok && rec.nonceErr != nil {
		return &acme.Problem{Type: acme.ProbServerInternal, Status: http.StatusServiceUnavailable,
			Detail:     "no nonce can be issued now (the nonce store is unavailable); retry after the Retry-After",
			RetryAfter: unavailableRetryAfter, Cause: rec.nonceErr}
	}
	if r.Method == http.MethodGet {
		w.WriteHeader(http.StatusNoContent)
	} else {
		w.WriteHeader(http.StatusOK)
	}
	return nil
}

// decode unmarshals a JWS payload strictly (jws.Unmarshal): type errors,
// duplicate member names and member names that match a field only
// case-insensitively are malformed.
func decode(req *jws.Request, v any) error {
	if req.PostAsGet() {
		return acme.Malformed("this request needs a JSON payload, not an empty POST-as-GET")
	}
	if err := jws.Unmarshal(req.Payload, v); err != nil {
		if me, ok := errors.AsType[*jws.MemberError](err); ok {
			return acme.Malformed("the JWS payload: %v", me)
		}
		return acme.Malformed("the JWS payload is not valid JSON for this request: %v", err)
	}
	return nil
}

// requirePostAsGet refuses a payload on a fetch-only resource.
func requirePostAsGet(req *jws.Request) error {
	if !req.PostAsGet() {
		return acme.Malformed("this resource is fetched with POST-as-GET: the payload must be empty (RFC 8555 §6.3)")
	}
	return nil
}

// requireAccountFetch refuses what is not a POST-as-GET of a valid
// account: a payload, a JWS signed with a "jwk" instead of the account's
// "kid" (RFC 8555 §6.3), an account that is not valid (§7.3.6).
func requireAccountFetch(req *jws.Request) error {
	if err := requirePostAsGet(req); err != nil {
		return err
	}
	if req.Account == nil {
		return acme.Malformed("a POST-as-GET must be signed with an account key ID (kid), not a jwk (RFC 8555 §6.3)")
	}
	if req.Account.Status != acme.StatusValid {
		return acme.AccountNotValid(req.Account.ID, req.Account.Status)
	}
	return nil
}

// fetched serves h, a resource clients GET, to a POST-as-GET of a valid
// account as well.
func (s *Server) fetched(h handler) postHandler {
	return func(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
		if err := requireAccountFetch(req); err != nil {
			return err
		}
		return h(w, r)
	}
}

func (s *Server) newAccount(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	var body acme.NewAccountRequest
	if err := decode(req, &body); err != nil {
		return err
	}
	if b := body.ExternalAccountBinding; len(b) > 0 && string(b) != "null" {
		eab, err := jws.ParseEAB(b, req, s.cfg.BaseURL+r.URL.RequestURI())
		if err != nil {
			return err
		}
		body.Binding = eab
	}
	a, created, err := s.svc.NewAccount(r.Context(), s.caller(w, r, req), body)
	if err != nil {
		return err
	}
	if rec, ok := w.(*statusRecorder); ok {
		rec.account = a.ID
	}
	w.Header().Set("Location", s.urls.account(a.ID))
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return writeJSON(w, status, s.accountView(a))
}

func (s *Server) account(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	var upd *acme.AccountUpdate
	if !req.PostAsGet() {
		upd = &acme.AccountUpdate{}
		if err := decode(req, upd); err != nil {
			return err
		}
	}
	a, err := s.svc.UpdateAccount(r.Context(), s.caller(w, r, req), acme.AccountID(chi.URLParam(r, "id")), upd)
	if err != nil {
		return err
	}
	w.Header().Set("Location", s.urls.account(a.ID))
	return writeJSON(w, http.StatusOK, s.accountView(a))
}

func (s *Server) keyChange(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	nk, err := s.verifier.VerifyKeyChange(req, s.cfg.BaseURL+r.URL.RequestURI())
	if err != nil {
		return err
	}
	a, err := s.svc.KeyChange(r.Context(), s.caller(w, r, req), nk.KeyJSON, nk.Thumbprint)
	if err != nil {
		return err
	}
	w.Header().Set("Location", s.urls.account(a.ID))
	return writeJSON(w, http.StatusOK, s.accountView(a))
}

type ordersView struct {
	Orders []string `json:"orders"`
}

func (s *Server) orders(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	if err := requirePostAsGet(req); err != nil {
		return err
	}
	id := acme.AccountID(chi.URLParam(r, "id"))
	// URL.Query drops what it cannot parse, and Get reads the first of
	// several values: both would read a malformed query as another one.
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return acme.Malformed("the orders URL's query is malformed: %v", err)
	}
	if len(q["cursor"]) > 1 {
		return acme.Malformed("the orders URL has more than one \"cursor\"")
	}
	ids, next, err := s.svc.ListOrders(r.Context(), s.caller(w, r, req), id, q.Get("cursor"), s.cfg.OrdersPerPage)
	if err != nil {
		return err
	}
	v := ordersView{Orders: make([]string, len(ids))}
	for i, oid := range ids {
		v.Orders[i] = s.urls.order(oid)
	}
	if next != "" {
		w.Header().Add("Link", link(s.urls.orders(id)+"?cursor="+next, "next"))
	}
	return writeJSON(w, http.StatusOK, v)
}

func (s *Server) newOrder(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	var body acme.NewOrderRequest
	if err := decode(req, &body); err != nil {
		return err
	}
	o, err := s.svc.NewOrder(r.Context(), s.caller(w, r, req), body)
	if err != nil {
		return err
	}
	w.Header().Set("Location", s.urls.order(o.ID))
	return writeJSON(w, http.StatusCreated, s.orderView(o))
}

func (s *Server) order(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	if err := requirePostAsGet(req); err != nil {
		return err
	}
	o, err := s.svc.GetOrder(r.Context(), s.caller(w, r, req), acme.OrderID(chi.URLParam(r, "id")))
	if err != nil {
		return err
	}
	return s.writeOrder(w, o)
}

func (s *Server) writeOrder(w http.ResponseWriter, o *acme.Order) error {
	w.Header().Set("Location", s.urls.order(o.ID))
	if o.Status == acme.StatusProcessing {
		w.Header().Set("Retry-After", retryAfter(pollAfter))
	}
	return writeJSON(w, http.StatusOK, s.orderView(o))
}

type finalizeRequest struct {
	CSR string `json:"csr"`
}

func (s *Server) finalize(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	var body finalizeRequest
	if err := decode(req, &body); err != nil {
		return err
	}
	der, err := base64.RawURLEncoding.DecodeString(body.CSR)
	if err != nil || len(der) == 0 {
		return acme.NewProblem(acme.ProbBadCSR, "\"csr\" must be a base64url-encoded DER CSR without padding (RFC 8555 §7.4)")
	}
	o, err := s.svc.Finalize(r.Context(), s.caller(w, r, req), acme.OrderID(chi.URLParam(r, "id")), der)
	if err != nil {
		return err
	}
	return s.writeOrder(w, o)
}

type authzUpdate struct {
	Status acme.Status `json:"status"`
}

func (s *Server) authz(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	id := acme.AuthzID(chi.URLParam(r, "id"))
	var (
		a   *acme.Authorization
		err error
	)
	if req.PostAsGet() {
		a, err = s.svc.GetAuthz(r.Context(), s.caller(w, r, req), id)
	} else {
		var upd authzUpdate
		if err := decode(req, &upd); err != nil {
			return err
		}
		if upd.Status != acme.StatusDeactivated {
			return acme.Malformed("an authorization's status can only be changed to %q (RFC 8555 §7.5.2)", acme.StatusDeactivated)
		}
		a, err = s.svc.DeactivateAuthz(r.Context(), s.caller(w, r, req), id)
	}
	if err != nil {
		return err
	}
	if a.Status == acme.StatusPending {
		for _, c := range a.Challenges {
			if c.Status == acme.StatusProcessing {
				w.Header().Set("Retry-After", retryAfter(pollAfter))
			}
		}
	}
	return writeJSON(w, http.StatusOK, s.authzView(a))
}

func (s *Server) challenge(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	id := acme.ChallengeID(chi.URLParam(r, "id"))
	var (
		c   *acme.Challenge
		a   *acme.Authorization
		err error
	)
	if req.PostAsGet() {
		c, a, err = s.svc.GetChallenge(r.Context(), s.caller(w, r, req), id)
	} else {
		// RFC 8555 §7.5.1: the payload is "{}" (any object is accepted).
		var body map[string]any
		if err := decode(req, &body); err != nil {
			return err
		}
		c, a, err = s.svc.RespondChallenge(r.Context(), s.caller(w, r, req), id)
	}
	if err != nil {
		return err
	}
	w.Header().Add("Link", link(s.urls.authz(a.ID), "up"))
	if c.Status == acme.StatusProcessing {
		w.Header().Set("Retry-After", retryAfter(pollAfter))
	}
	return writeJSON(w, http.StatusOK, s.challengeView(c))
}

// certificate serves a certificate (RFC 8555 §7.4.2): by default as
// application/pem-certificate-chain, the leaf then its issuer; on request
// (Accept) as application/pkix-cert, the leaf alone, with a Link rel="up"
// to its issuer, as §7.4.2 asks of a format that holds one certificate.
// The PEM chain carries no rel="up": it already holds the issuer, and
// acmez (Caddy) follows "up" wherever it appears, appending the issuer to
// the chain a second time and asking renewalInfo about the intermediate
// (Pebble and step-ca send no "up" with it either).
func (s *Server) certificate(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	c, format, err := s.certificateFor(w, r, req)
	if err != nil {
		return err
	}
	h := w.Header()
	body := c.ChainPEM
	if format == mediaPKIXCert {
		h.Add("Link", link(s.urls.certIssuer(c.Serial), "up"))
		body = c.DER
	}
	h.Set("Content-Type", format)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

// certificateIssuer serves the issuer of a certificate, the target of
// the rel="up" of its DER form: cut from the stored chain, so that it
// names the intermediate that signed this certificate even after the
// intermediate was rotated. By default it is a PEM chain, on request one
// DER certificate. The AIA caIssuers URL in certificates stays the DER
// file at pathIntermediate (RFC 5280 §4.2.2.1).
func (s *Server) certificateIssuer(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	c, format, err := s.certificateFor(w, r, req)
	if err != nil {
		return err
	}
	_, rest := pem.Decode(c.ChainPEM)
	issuer, _ := pem.Decode(rest)
	if issuer == nil || issuer.Type != "CERTIFICATE" {
		return acme.NotFound("certificate %s is stored without its issuer", c.Serial)
	}
	body := bytes.TrimLeft(rest, "\r\n")
	if format == mediaPKIXCert {
		body = issuer.Bytes
	}
	w.Header().Set("Content-Type", format)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

// certificateFor checks a POST-as-GET for a certificate resource and
// returns the certificate and the format to serve it in.
func (s *Server) certificateFor(w http.ResponseWriter, r *http.Request, req *jws.Request) (*acme.Certificate, string, error) {
	if err := requirePostAsGet(req); err != nil {
		return nil, "", err
	}
	format := certFormat(r.Header.Get("Accept"))
	if format == "" {
		p := acme.Malformed("certificates are served as %s or %s", mediaPEMChain, mediaPKIXCert)
		p.Status = http.StatusNotAcceptable
		return nil, "", p
	}
	c, err := s.svc.GetCertificate(r.Context(), s.caller(w, r, req), chi.URLParam(r, "serial"))
	return c, format, err
}

func (s *Server) revoke(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	var body acme.RevokeRequest
	if err := decode(req, &body); err != nil {
		return err
	}
	der, err := base64.RawURLEncoding.DecodeString(body.Certificate)
	if err != nil || len(der) == 0 {
		return acme.Malformed("\"certificate\" must be a base64url-encoded DER certificate (RFC 8555 §7.6)")
	}
	reason := 0
	if body.Reason != nil {
		reason = *body.Reason
	}
	if err := s.svc.Revoke(r.Context(), s.caller(w, r, req), der, reason); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
