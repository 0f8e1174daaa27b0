package web

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
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
			ExternalAccountRequired: s.svc.EAB().Required, Quota: s.quotaURL()},
	})
}

// newNonce answers HEAD with 200 and GET with 204 (RFC 8555 §7.2); wrap
// has already set Replay-Nonce. When wrap could not issue one, it answers
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

// decode unmarshals a JWS payload strictly enough to catch type errors.
func decode(req *jws.Request, v any) error {
	if req.PostAsGet() {
		return acme.Malformed("this request needs a JSON payload, not an empty POST-as-GET")
	}
	if err := json.Unmarshal(req.Payload, v); err != nil {
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
	a, err := s.svc.UpdateAccount(r.Context(), s.caller(w, r, req), chi.URLParam(r, "id"), upd)
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
	id := chi.URLParam(r, "id")
	ids, next, err := s.svc.ListOrders(r.Context(), s.caller(w, r, req), id, r.URL.Query().Get("cursor"), s.cfg.OrdersPerPage)
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
	o, err := s.svc.GetOrder(r.Context(), s.caller(w, r, req), chi.URLParam(r, "id"))
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
	o, err := s.svc.Finalize(r.Context(), s.caller(w, r, req), chi.URLParam(r, "id"), der)
	if err != nil {
		return err
	}
	return s.writeOrder(w, o)
}

type authzUpdate struct {
	Status acme.Status `json:"status"`
}

func (s *Server) authz(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	id := chi.URLParam(r, "id")
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
	id := chi.URLParam(r, "id")
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

func (s *Server) certificate(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	c, err := s.certificateFor(w, r, req)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Add("Link", link(s.urls.certIssuer(c.Serial), "up"))
	h.Set("Content-Type", "application/pem-certificate-chain")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(c.ChainPEM)
	return nil
}

// certificateIssuer serves the chain of a certificate without the
// certificate itself: its issuer (and any CA certificate above it that the
// chain holds), as application/pem-certificate-chain. It is the target of
// the certificate resource's Link rel="up" (RFC 8555 §7.4.2). Clients
// that follow "up" fetch it as they fetch the certificate, with
// POST-as-GET, and accept only that media type (acmez, and so Caddy,
// appends what it gets to the chain). It is cut from the stored chain, so
// it names the intermediate that signed this certificate even after the
// intermediate was rotated. The AIA caIssuers URL in certificates stays
// the DER file at pathIntermediate (RFC 5280 §4.2.2.1).
func (s *Server) certificateIssuer(w http.ResponseWriter, r *http.Request, req *jws.Request) error {
	c, err := s.certificateFor(w, r, req)
	if err != nil {
		return err
	}
	_, rest := pem.Decode(c.ChainPEM)
	if b, _ := pem.Decode(rest); b == nil || b.Type != "CERTIFICATE" {
		return acme.NotFound("certificate %s is stored without its issuer", c.Serial)
	}
	w.Header().Set("Content-Type", "application/pem-certificate-chain")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(bytes.TrimLeft(rest, "\r\n"))
	return nil
}

// certificateFor checks a POST-as-GET for a certificate resource and
// returns the certificate.
func (s *Server) certificateFor(w http.ResponseWriter, r *http.Request, req *jws.Request) (*acme.Certificate, error) {
	if err := requirePostAsGet(req); err != nil {
		return nil, err
	}
	if accept := r.Header.Get("Accept"); accept != "" && !acceptsPEMChain(accept) {
		p := acme.Malformed("certificates are served as application/pem-certificate-chain only")
		p.Status = http.StatusNotAcceptable
		return nil, p
	}
	return s.svc.GetCertificate(r.Context(), s.caller(w, r, req), chi.URLParam(r, "serial"))
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
