// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
)

// The admin API is JSON over HTTP under /api/v1, authenticated by the
// bearer token. Every error is {"error": "..."} with a fitting status
// (the role check's 403 too). The weir CLI is its main client;
// docs/operations.md lists the routes.

// apiError is an error with an HTTP status.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	writeBody(w, v)
}

// writeBody writes v as indented JSON.
func writeBody(w http.ResponseWriter, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// fail maps an error to its status and message: bad requests and ACME
// problems keep theirs, anything else is a 500 whose cause is logged.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if errors.As(err, &ae) {
		writeError(w, ae.status, ae.msg)
		return
	}
	if errors.Is(err, acme.ErrBadCursor) {
		writeError(w, http.StatusBadRequest, "malformed cursor: use the next cursor of a listing as given")
		return
	}
	var p *acme.Problem
	if errors.As(err, &p) && p.Type != acme.ProbServerInternal {
		status := p.Status
		if status == 0 {
			status = http.StatusBadRequest
		}
		writeError(w, status, p.Detail)
		return
	}
	s.cfg.Log.Error("admin API error", "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, "internal error; see the server log")
}

// apiHandler is an admin API endpoint: it writes its response, or returns
// an error and writes nothing.
type apiHandler func(w http.ResponseWriter, r *http.Request) error

// api makes h a route. It is where the endpoints' errors are rendered, by
// fail: {"error": "..."} with the status an apiError or ACME problem
// carries, a 500 for anything else.
func (s *Server) api(h apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.fail(w, r, err)
		}
	}
}

func (s *Server) apiRoutes(r chi.Router) {
	r.Get("/overview", s.api(s.apiOverview))
	r.Get("/config", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, s.cfg.Config()) })
	r.Get("/limits", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, s.Limits()) })
	r.Get("/ratelimit/status", s.api(s.apiStatus))
	r.Post("/ratelimit/explain", s.api(s.apiExplain))
	r.Post("/ratelimit/reset", s.api(s.apiReset))
	r.Get("/ratelimit/activity", s.api(s.apiActivity))
	r.Get("/accounts", s.api(s.apiAccounts))
	r.Get("/accounts/{id}", s.api(s.apiAccount))
	r.Post("/accounts/{id}/deactivate", s.api(s.apiDeactivate))
	r.Get("/certs", s.api(s.apiCerts))
	r.Get("/certs/{serial}", s.api(s.apiCert))
	r.Post("/certs/{serial}/revoke", s.api(s.apiRevoke))
	r.Post("/certs/revoke-all", s.api(s.apiRevokeAll))
	r.Post("/certs/renew-now", s.api(s.apiRenewNow))
	r.Get("/orders", s.api(s.apiOrders))
	r.Get("/crl", s.api(s.apiCRL))
	r.Post("/crl/regenerate", s.api(s.apiCRLRegenerate))
	r.Get("/ca/migration", s.api(s.apiMigration))
	s.eabRoutes(r)
	s.tenantRoutes(r)
	s.credentialRoutes(r)
	s.logRoutes(r)
}

func (s *Server) apiOverview(w http.ResponseWriter, r *http.Request) error {
	v, err := s.Overview(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) apiStatus(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	buckets, err := s.Status(r.Context(), StatusQuery{Account: q.Get("account"), IP: q.Get("ip"), Key: q.Get("key")})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"buckets": buckets})
	return nil
}

// decodeBody reads a JSON body, or a form when the dashboard posts one.
func decodeBody(r *http.Request, v any) error {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			return badRequest("the request body is not the expected JSON: %v", err)
		}
		return nil
	}
	return badRequest("send Content-Type: application/json")
}

// ExplainRequest is the body of POST /api/v1/ratelimit/explain.
type ExplainRequest struct {
	Account string   `json:"account"`
	Names   []string `json:"names"`
}

func (s *Server) apiExplain(w http.ResponseWriter, r *http.Request) error {
	var req ExplainRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	v, err := s.Explain(r.Context(), req.Account, req.Names)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// ResetRequest is the body of POST /api/v1/ratelimit/reset.
type ResetRequest struct {
	Key string `json:"key"`
}

func (s *Server) apiReset(w http.ResponseWriter, r *http.Request) error {
	var req ResetRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if err := s.Reset(r.Context(), req.Key); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"reset": req.Key})
	return nil
}

// ActivityView is the limiter's recent activity on this replica.
type ActivityView struct {
	Recent []Denial          `json:"recent_429s"`
	Hot    []BucketView      `json:"hottest_buckets"`
	ByLim  map[string]uint64 `json:"denials_by_limit"`
	// Degraded is what the in-process fallback decided (metrics_degraded.go).
	Degraded DegradedView `json:"degraded"`
}

func (s *Server) apiActivity(w http.ResponseWriter, r *http.Request) error {
	v, err := s.Activity(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// Activity gathers the recent 429s and the hottest buckets with their
// current capacity, least remaining first.
func (s *Server) Activity(r *http.Request) (*ActivityView, error) {
	v := &ActivityView{Recent: s.cfg.Metrics.Recent429s(50), ByLim: s.cfg.Metrics.DenialsByLimit(), Hot: []BucketView{},
		Degraded: s.cfg.Metrics.Degraded()}
	if v.Recent == nil {
		v.Recent = []Denial{}
	}
	for _, h := range s.cfg.Metrics.HotKeys(20) {
		b, err := s.Status(r.Context(), StatusQuery{Key: h.Limit + ":" + h.Key})
		if err != nil || len(b) == 0 {
			continue
		}
		v.Hot = append(v.Hot, b[0])
	}
	sortByPressure(v.Hot)
	return v, nil
}

func queryLimit(r *http.Request) int {
	n, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	return acme.PageLimit(n)
}

func (s *Server) inventory() (acme.Inventory, error) {
	inv, ok := s.cfg.Service.Inventory()
	if !ok {
		return nil, errors.New("admin: the store has no inventory")
	}
	return inv, nil
}

// Page is one page of a listing; Next is the cursor of the next page.
type Page[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next,omitempty"`
}

func (s *Server) apiAccounts(w http.ResponseWriter, r *http.Request) error {
	p, err := s.Accounts(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// Accounts lists accounts per the query parameters q, status, cursor, limit.
func (s *Server) Accounts(r *http.Request) (*Page[AccountView], error) {
	inv, err := s.inventory()
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	accts, next, err := inv.ListAccounts(r.Context(), acme.AccountQuery{
		Search: q.Get("q"), Status: acme.Status(q.Get("status")), Cursor: q.Get("cursor"), Limit: queryLimit(r)})
	if err != nil {
		return nil, err
	}
	p := &Page[AccountView]{Items: []AccountView{}, Next: next}
	for _, a := range accts {
		p.Items = append(p.Items, accountView(a))
	}
	return p, nil
}

func (s *Server) apiAccount(w http.ResponseWriter, r *http.Request) error {
	a, err := s.cfg.Service.Store().GetAccount(r.Context(), acme.AccountID(chi.URLParam(r, "id")))
	if err != nil {
		return notFound(err, "account "+chi.URLParam(r, "id"))
	}
	writeJSON(w, http.StatusOK, accountView(a))
	return nil
}

func notFound(err error, what string) error {
	if errors.Is(err, acme.ErrNotFound) {
		return &apiError{status: http.StatusNotFound, msg: what + " does not exist"}
	}
	return err
}

func (s *Server) apiDeactivate(w http.ResponseWriter, r *http.Request) error {
	a, err := s.cfg.Service.AdminDeactivateAccount(r.Context(), acme.AccountID(chi.URLParam(r, "id")))
	if err != nil {
		return err
	}
	s.logAction(r.Context(), "admin: account deactivated", "account", a.ID)
	writeJSON(w, http.StatusOK, accountView(a))
	return nil
}

func (s *Server) apiCerts(w http.ResponseWriter, r *http.Request) error {
	p, err := s.Certs(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// Certs lists certificates per the query parameters q, account, state,
// cursor, limit.
func (s *Server) Certs(r *http.Request) (*Page[CertView], error) {
	inv, err := s.inventory()
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	state := acme.CertState(q.Get("state"))
	switch state {
	case acme.CertAny, acme.CertActive, acme.CertRevoked, acme.CertExpired:
	default:
		return nil, badRequest("state %q is not one of active, revoked, expired", state)
	}
	now := s.cfg.Now().UTC()
	certs, next, err := inv.ListCertificates(r.Context(), acme.CertQuery{
		AccountID: acme.AccountID(q.Get("account")), Search: q.Get("q"), State: state, Now: now, Cursor: q.Get("cursor"), Limit: queryLimit(r)})
	if err != nil {
		return nil, err
	}
	p := &Page[CertView]{Items: []CertView{}, Next: next}
	for _, c := range certs {
		p.Items = append(p.Items, certView(c, now, false))
	}
	return p, nil
}

func (s *Server) apiCert(w http.ResponseWriter, r *http.Request) error {
	serial := normalizeSerial(chi.URLParam(r, "serial"))
	c, err := s.cfg.Service.Store().GetCertificate(r.Context(), serial)
	if err != nil {
		return notFound(err, "certificate "+serial)
	}
	writeJSON(w, http.StatusOK, certView(c, s.cfg.Now().UTC(), true))
	return nil
}

// RevokeRequest is the body of POST /api/v1/certs/{serial}/revoke.
type RevokeRequest struct {
	// Reason is an RFC 5280 reason name (keyCompromise) or code.
	Reason string `json:"reason"`
}

// normalizeSerial accepts a serial as operators paste it — upper case,
// with colons (openssl's form), without a leading zero — and returns weir's
// form (lower-case hex, even length); anything not hex is returned as is
// and will not be found.
func normalizeSerial(s string) string {
	s = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), ":", ""))
	n, ok := new(big.Int).SetString(s, 16)
	if !ok || n.Sign() <= 0 {
		return s
	}
	return ca.SerialHex(n)
}

// parseReason reads a reason name or number; "" is unspecified (0).
func parseReason(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if !ca.OperatorReason(n) {
			return 0, badRequest("reason %d is not a reason an operator may give (RFC 5280 codes but certificateHold and removeFromCRL)", n)
		}
		return n, nil
	}
	n, err := ca.ReasonFromString(s)
	if err != nil {
		return 0, badRequest("%v", err)
	}
	return n, nil
}

func (s *Server) apiRevoke(w http.ResponseWriter, r *http.Request) error {
	var req RevokeRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	v, err := s.Revoke(r, chi.URLParam(r, "serial"), req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// Revoke revokes a certificate by serial with a reason name or code.
func (s *Server) Revoke(r *http.Request, serial, reason string) (*CertView, error) {
	code, err := parseReason(reason)
	if err != nil {
		return nil, err
	}
	serial = normalizeSerial(serial)
	c, err := s.cfg.Service.AdminRevoke(r.Context(), serial, code)
	if err != nil {
		return nil, err
	}
	s.logAction(r.Context(), "admin: certificate revoked", "serial", serial, "reason", ca.ReasonString(code))
	v := certView(c, s.cfg.Now().UTC(), false)
	return &v, nil
}

func (s *Server) apiOrders(w http.ResponseWriter, r *http.Request) error {
	p, err := s.Orders(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// Orders lists orders per the query parameters account, status, cursor,
// limit.
func (s *Server) Orders(r *http.Request) (*Page[OrderView], error) {
	inv, err := s.inventory()
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	orders, next, err := inv.ListAllOrders(r.Context(), acme.OrderQuery{
		AccountID: acme.AccountID(q.Get("account")), Status: acme.Status(q.Get("status")), Cursor: q.Get("cursor"), Limit: queryLimit(r)})
	if err != nil {
		return nil, err
	}
	p := &Page[OrderView]{Items: []OrderView{}, Next: next}
	for _, o := range orders {
		// The stored status of a pending order is not what its client
		// sees once an authorization failed or all passed.
		if o, err = s.cfg.Service.OrderStatusNow(r.Context(), o); err != nil {
			return nil, err
		}
		p.Items = append(p.Items, orderView(o))
	}
	return p, nil
}

func (s *Server) apiCRL(w http.ResponseWriter, r *http.Request) error {
	v, der, err := s.CRL(r.Context())
	if err != nil {
		return err
	}
	if r.URL.Query().Get("format") == "der" {
		w.Header().Set("Content-Type", "application/pkix-crl")
		_, _ = w.Write(der)
		return nil
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) apiCRLRegenerate(w http.ResponseWriter, r *http.Request) error {
	if err := s.cfg.Service.RegenerateCRL(r.Context()); err != nil {
		return err
	}
	return s.apiCRL(w, r)
}
