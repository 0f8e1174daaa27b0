// SPDX-License-Identifier: Apache-2.0

// Package web is weir's ACME HTTP front end: the route table, the JWS
// adapter, the JSON representations, the URL builder and the one place
// where problems are rendered (RFC 8555 §6.7).
package web

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/jws"
	"github.com/weir-pki/weir/ratelimit"
)

// Config configures the front end.
type Config struct {
	// BaseURL is the external URL clients use, e.g. https://ca.example:14000.
	BaseURL string
	// MaxBodyBytes limits a POST body (default 64 KiB).
	MaxBodyBytes int64
	// Website, TermsOfService and CAAIdentities fill the directory "meta".
	Website        string
	TermsOfService string
	CAAIdentities  []string
	// Persist is what the directory and dns-persist-01 challenges say of
	// dns-persist-01; zero when it is not offered.
	Persist PersistMeta
	// OrdersPerPage is the page size of an account's orders list.
	OrdersPerPage int
	// RootPEM is served at /root.pem; the CA certificates for distribution.
	RootPEM []byte
	// RootCRL, when set, returns the root's CRL to serve at
	// /ca/root-crl.der (nil: none, a 404); it is called on every request,
	// so a new file shows at once.
	RootCRL func() []byte
	// Health, when set, serves /healthz and /readyz, outside the ACME
	// wrapper: no nonce, no global limit, no request log line.
	Health *Health
	// Profiles, when set, returns the certificate profiles offered, name
	// to description, for the directory's meta.profiles. It is called on
	// every directory request, so a reload shows at once.
	Profiles func() map[string]string
	// TransparencyLog, when set, serves the verifiable log's checkpoint
	// and tiles (C2SP tlog-tiles) under PathLog, on the ACME listener and
	// the plain-HTTP one, as a public artefact; nil: 404.
	TransparencyLog http.Handler
}

// profiles is the directory's meta.profiles; nil when none are offered.
func (s *Server) profiles() map[string]string {
	if s.cfg.Profiles == nil {
		return nil
	}
	return s.cfg.Profiles()
}

// Server serves the ACME API.
type Server struct {
	cfg      Config
	svc      *acme.Service
	nonces   acme.NonceStore
	verifier *jws.Verifier
	urls     urls
	log      *slog.Logger
	now      func() time.Time
	edge     atomic.Pointer[EdgeConfig]
	observer atomic.Pointer[observerBox]
	quota    quotaState
}

// SetObserver installs the observer of every request and of the global
// layer's decisions; nil means acme.NopObserver. It may be called at any
// time.
func (s *Server) SetObserver(o acme.Observer) {
	if o == nil {
		s.observer.Store(nil)
		return
	}
	s.observer.Store(&observerBox{o})
}

// observerBox holds an acme.Observer behind an atomic.Pointer.
type observerBox struct{ acme.Observer }

// obs returns the current observer.
func (s *Server) obs() acme.Observer {
	if b := s.observer.Load(); b != nil {
		return b.Observer
	}
	return acme.NopObserver{}
}

// New makes the front end for svc.
func New(cfg Config, svc *acme.Service, nonces acme.NonceStore, log *slog.Logger) (*Server, error) {
	cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/")
	if !strings.HasPrefix(cfg.BaseURL, "https://") && !strings.HasPrefix(cfg.BaseURL, "http://") {
		return nil, fmt.Errorf("web: base URL %q must be an http(s) URL", cfg.BaseURL)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 64 << 10
	}
	if cfg.OrdersPerPage <= 0 {
		cfg.OrdersPerPage = 100
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, svc: svc, nonces: nonces, urls: urls{base: cfg.BaseURL}, log: log, now: time.Now}
	s.verifier = jws.NewVerifier(nonces, svc.Account, s.urls.account(""))
	s.verifier.SetAccountRefresh(svc.AccountFresh)
	return s, nil
}

// handler is an ACME endpoint: it writes a success response or returns an
// error that render turns into a problem document.
type handler func(w http.ResponseWriter, r *http.Request) error

// postHandler is an endpoint that needs an authenticated JWS.
type postHandler func(w http.ResponseWriter, r *http.Request, req *jws.Request) error

// Handler returns the route table.
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
	r.NotFound(s.wrap("not-found", func(http.ResponseWriter, *http.Request) error {
		return acme.NotFound("no such resource")
	}))
	r.MethodNotAllowed(s.wrap("method-not-allowed", func(w http.ResponseWriter, r *http.Request) error {
		p := acme.Malformed("method %s is not allowed here", r.Method)
		p.Status = http.StatusMethodNotAllowed
		return p
	}))
	r.Get("/directory", s.wrap("directory", s.directory))
	r.Head(pathNewNonce, s.wrap("new-nonce", s.newNonce))
	r.Get(pathNewNonce, s.wrap("new-nonce", s.newNonce))
	// RFC 8555 §6.3: the directory and newNonce take a GET "in addition to"
	// POST-as-GET, so they answer a POST-as-GET too.
	r.Post("/directory", s.post("directory", s.fetched(s.directory)))
	r.Post(pathNewNonce, s.post("new-nonce", s.fetched(s.newNonce)))
	// RFC 8555 §6.3: resources are fetched with POST-as-GET, so every
	// ACME route is a POST; the auth mode is in the handler's name.
	r.Post(pathNewAccount, s.post("new-account", s.newAccount))
	r.Post(pathNewOrder, s.post("new-order", s.newOrder))
	r.Post(pathRevoke, s.post("revoke-cert", s.revoke))
	r.Post(pathKeyChange, s.post("key-change", s.keyChange))
	r.Post(pathAccount+"{id}", s.post("account", s.account))
	r.Post(pathAccount+"{id}/orders", s.post("orders", s.orders))
	r.Post(pathOrder+"{id}", s.post("order", s.order))
	r.Post(pathOrder+"{id}/finalize", s.post("finalize", s.finalize))
	r.Post(pathAuthz+"{id}", s.post("authz", s.authz))
	r.Post(pathChallenge+"{id}", s.post("challenge", s.challenge))
	r.Post(pathCert+"{serial}", s.post("certificate", s.certificate))
	r.Post(pathCert+"{serial}/issuer", s.post("certificate-issuer", s.certificateIssuer))
	r.Post(pathQuota, s.post("quota", s.quotaResource))
	// RFC 9773 §4.2: renewalInfo is fetched with a plain GET.
	r.Get(pathRenewalInfo+"/{id}", s.wrap("renewal-info", s.renewalInfo))
	s.routeArtefacts(r) // artefacts.go: also the plain-HTTP listener's
	if h := s.cfg.Health; h != nil {
		for _, p := range []string{PathHealthz, PathReadyz} {
			r.Get(p, h.ServeHTTP)
			r.Head(p, h.ServeHTTP)
		}
	}
	return r
}

// wrap adds the headers every ACME response carries, runs the global
// layer, renders errors, and reports and logs the request. The use cases
// annotate the log line through the acme.RequestEvent in the context.
func (s *Server) wrap(name string, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		hdr := w.Header()
		hdr.Set("Cache-Control", "no-store")
		hdr.Add("Link", link(s.urls.directory(), "index"))
		// Every response carries a fresh nonce (RFC 8555 §6.5). When none
		// can be issued the response still goes out, without one:
		// new-nonce answers 503 and any problem gets a Retry-After
		// (docs/ARCHITECTURE.md, "Nonces").
		var nonceErr error
		if n, err := s.nonces.Nonce(r.Context()); err == nil {
			hdr.Set("Replay-Nonce", n)
		} else {
			nonceErr = err
		}
		// The client IP is found once: the global layer, the use cases and
		// the log line all take it from rec.
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK, ip: s.clientIP(r), srv: s, req: r, nonceErr: nonceErr}
		obs := s.obs()
		err := s.edgeAllow(rec, obs)
		if err == nil {
			err = h(rec, r.WithContext(acme.WithRequestEvent(r.Context(), &rec.ev)))
		}
		var prob *acme.Problem
		var typ acme.ProblemType
		if err != nil {
			prob = s.renderProblem(rec, err)
			typ = prob.Type
		}
		d := time.Since(start)
		obs.Request(name, rec.status, typ, d)
		s.logRequest(r, name, rec, prob, d)
	}
}

// post authenticates a JWS POST before calling h (RFC 8555 §6.2).
func (s *Server) post(name string, h postHandler) http.HandlerFunc {
	return s.wrap(name, func(w http.ResponseWriter, r *http.Request) error {
		req, err := s.authenticate(r)
		if err != nil {
			return err
		}
		if rec, ok := w.(*statusRecorder); ok && req.Account != nil {
			rec.account = req.Account.ID
			rec.acct = req.Account // kid-signed: the response carries the RateLimit fields
		}
		return h(w, r, req)
	})
}

// authenticate checks the media type, the body size and the JWS.
func (s *Server) authenticate(r *http.Request) (*jws.Request, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/jose+json" {
		p := acme.Malformed("the Content-Type must be application/jose+json (RFC 8555 §6.2), not %q", r.Header.Get("Content-Type"))
		p.Status = http.StatusUnsupportedMediaType
		return nil, p
	}
	body, err := readBody(http.MaxBytesReader(nil, r.Body, s.cfg.MaxBodyBytes), r.ContentLength, s.cfg.MaxBodyBytes)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			p := acme.Malformed("the request body is larger than %d bytes", s.cfg.MaxBodyBytes)
			p.Status = http.StatusRequestEntityTooLarge
			return nil, p
		}
		return nil, acme.Malformed("reading the request body: %v", err)
	}
	return s.verifier.Verify(r.Context(), body, s.cfg.BaseURL+r.URL.RequestURI())
}

// readBody reads a request body of at most limit bytes from r, which
// enforces the limit. A body that announced its length (as ACME clients'
// do) is read into one buffer of that size, and one byte more to see it
// end; io.ReadAll would start at 512 bytes and grow through several.
func readBody(r io.Reader, contentLength, limit int64) ([]byte, error) {
	if contentLength <= 0 || contentLength > limit {
		return io.ReadAll(r)
	}
	buf := make([]byte, contentLength+1)
	n, err := io.ReadFull(r, buf)
	switch err {
	case io.EOF, io.ErrUnexpectedEOF: // the body ended within the buffer
		return buf[:n], nil
	case nil: // longer than announced
		rest, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		return append(buf, rest...), nil
	default:
		return nil, err
	}
}

// caller turns an authenticated request into an acme.Caller; w is the
// statusRecorder of wrap, which holds the client IP.
func (s *Server) caller(w http.ResponseWriter, r *http.Request, req *jws.Request) acme.Caller {
	var ip netip.Addr
	if rec, ok := w.(*statusRecorder); ok {
		ip = rec.ip
	} else {
		ip = s.clientIP(r)
	}
	return acme.Caller{Account: req.Account, Key: req.Key, KeyJSON: req.KeyJSON, Thumbprint: req.Thumbprint, IP: ip}
}

// currentCRL is the CRL to serve: one that lists every revocation stored,
// by any replica (acme.Service.CurrentCRL); nil when the store cannot say.
func (s *Server) currentCRL(r *http.Request) []byte {
	der, _, err := s.svc.CurrentCRL(r.Context())
	if err != nil {
		s.log.Error("serving the CRL", "err", err)
		return nil
	}
	return der
}

// issuerCRL is the CRL of the issuer (and shard) the URL names, as
// currentCRL.
func (s *Server) issuerCRL(r *http.Request) []byte {
	shard, ok := urlShard(r)
	if !ok {
		return nil
	}
	der, _, err := s.svc.ShardCRL(r.Context(), chi.URLParam(r, "issuer"), shard)
	if err != nil {
		s.log.Error("serving the CRL", "issuer", chi.URLParam(r, "issuer"), "err", err)
		return nil
	}
	return der
}

// urlShard is the CRL shard the URL names: 0 without one, else a number
// from 1 in its canonical form ("01" is not shard 1).
func urlShard(r *http.Request) (int, bool) {
	p := chi.URLParam(r, "shard")
	if p == "" {
		return 0, true
	}
	n, err := strconv.Atoi(p)
	return n, err == nil && n >= 1 && strconv.Itoa(n) == p
}

// ofIssuer reports whether the URL names an issuer, and a shard of its
// CRLs when it names one.
func (s *Server) ofIssuer(r *http.Request) bool {
	id := chi.URLParam(r, "issuer")
	shard, ok := urlShard(r)
	return ok && s.svc.IssuerCertificate(id) != nil && shard <= s.svc.CRLShards(id)
}

// static serves a public CA artefact; it is reported to the observer as
// endpoint name. An artefact that is not available is a 503 with a
// Retry-After.
func (s *Server) static(name, contentType string, body func(*http.Request) []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		b := body(r)
		if len(b) == 0 {
			w.Header().Set("Retry-After", retryAfter(unavailableRetryAfter))
			http.Error(w, "not available", http.StatusServiceUnavailable)
			s.obs().Request(name, http.StatusServiceUnavailable, "", time.Since(start))
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(b)
		s.obs().Request(name, http.StatusOK, "", time.Since(start))
	}
}

// statusRecorder remembers, for the request's log line and observer, the
// status, the account, the client IP and what the use cases noted. It is
// the request's one allocation of per-request state: the RequestEvent and
// the global layer's request live in it.
type statusRecorder struct {
	http.ResponseWriter
	status    int
	account   acme.AccountID
	ip        netip.Addr
	ev        acme.RequestEvent
	globalReq [1]ratelimit.Request
	// srv and req serve beforeHeader (quota.go); acct is the account of
	// a kid-signed request, wrote set once the status line is written.
	srv   *Server
	req   *http.Request
	acct  *acme.Account
	wrote bool
	// nonceErr is why the response carries no Replay-Nonce; nil when it
	// does.
	nonceErr error
}

func (s *statusRecorder) WriteHeader(code int) {
	s.beforeHeader()
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Write writes the status line first if the handler did not, as
// http.ResponseWriter does, so that beforeHeader runs.
func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}
