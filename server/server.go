// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/challenge"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/web"
	"github.com/weir-pki/weir/web/admin"
)

// Server is a wired weir instance: the ACME service with its store,
// limiter, CA and front ends, and the admin listener.
type Server struct {
	cfg        Config
	configPath string
	log        *slog.Logger
	logLevel   *slog.LevelVar
	store      Store // SQLite or PostgreSQL (storage.go)
	backend    *limiterBackend
	limits     *limits.Adapter
	edge       *ratelimit.Edge
	svc        *acme.Service
	audit      *auditTrail    // audit.go
	vlog       *verifiableLog // transparencyrun.go; nil when the log is off
	validator  *challenge.Validator
	web        *web.Server
	nonces     acme.NonceStore
	limiterNow *limiterSettings
	reloadMu   sync.Mutex
	reloaded   reloadState
	serving    *servingCert // the certificate served (servercert.go)
	root       []byte       // PEM of the root, for the banner and /root.pem
	rootFP     string
	baseURL    string
	health     *web.Health // /healthz and /readyz, on the ACME and admin listeners
	admin      *admin.Server
	metrics    *admin.Metrics // Prometheus series and the limiter's recent activity
	adminLn    net.Listener   // the admin listener (Serve's); nil when admin is off
	started    time.Time
	// ownListeners are weir's listeners besides the admin listener that
	// validations must never connect to (Options.OtherListeners);
	// egress.go.
	ownListeners []net.Addr

	// adminToken is the digest of the admin token in use, to tell a
	// rotation from a reread of the same file (admintoken.go).
	adminToken [sha256.Size]byte
	// adminCreds are the named admin credentials, kept in the store and
	// read again every second (web/admin/credentials.go); nil without the
	// admin listener or its token.
	adminCreds *admin.CredentialSet

	// caKey is the hierarchy whose intermediate key (a PKCS#11 session
	// pool, say) Close releases.
	caKey *ca.Hierarchy
	// issuers are the CAs of every issuer (issuers.go); it holds the
	// keys of those of ca.issuers.
	issuers *issuerSet

	// closeNonces closes a Redis client of the nonces' own; nil when
	// there is none (nonces.go).
	closeNonces func() error

	// writeHealth watches whether the store and a SQLite limiter can
	// write, for /readyz; releaseProbe drops the store's probe lease
	// (writehealth.go, health.go).
	writeHealth  []*writeHealth
	releaseProbe func(ctx context.Context) error

	// rootCRL is the root's CRL served at /ca/root-crl.der (rootcrl.go);
	// nil without one.
	rootCRL atomic.Pointer[servedRootCRL]

	// conns caps the ACME listener's connections, httpConns the
	// plain-HTTP listener's, each with the caps of server.connections
	// (web/connlimit.go).
	conns, httpConns *web.ConnLimiter
}

// newLogger makes the process logger from log.level and log.format; the
// level can change on reload.
func newLogger(c LogConfig, w io.Writer) (*slog.Logger, *slog.LevelVar) {
	level, _ := parseLevel(c.Level)
	lv := new(slog.LevelVar)
	lv.Set(level)
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: durationsInMilliseconds}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), lv
	}
	return slog.New(slog.NewTextHandler(w, opts)), lv
}

// Options are what New needs besides the configuration.
type Options struct {
	// ConfigFile is the file cfg was read from: Serve reads it again on
	// SIGHUP and when its content changes, and applies what can change
	// live. "" (the embedded defaults) reloads nothing.
	ConfigFile string
	// Log receives the server's log, in log.format; nil discards it.
	Log io.Writer
	// OtherListeners are the addresses of weir's listeners besides the
	// ACME and admin ones (weir serve's -pprof), which validations must
	// never connect to.
	OtherListeners []net.Addr
	// Build says which weir this is, for weir_build_info (its zero value
	// publishes empty labels).
	Build BuildInfo
}

// New creates the data directory, the CA and the store, and wires the
// ACME service, its front end and the admin surface of cfg, which
// Validate accepts. Nothing listens until Serve.
func New(ctx context.Context, cfg Config, opts Options) (*Server, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	log, logLevel := newLogger(cfg.Log, opts.Log)
	dd, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	cfg.DataDir = dd
	if err := os.MkdirAll(dd, 0o700); err != nil {
		return nil, fmt.Errorf("data-dir: %w", err)
	}
	now := time.Now()
	h, created, err := loadOrCreateHierarchy(cfg, now, "")
	if err != nil {
		return nil, fmt.Errorf("ca: %w", err)
	}
	if created {
		log.Info("generated a new CA", "root", h.Root.Subject.String(), "intermediate", h.Intermediate.Subject.String(), "dir", dataPath(dd, "ca"))
	}
	base := cfg.Server.ExternalURL
	if base == "" {
		base = "https://" + cfg.Server.Listen
	}
	rootCRL, err := startRootCRL(log, cfg, h.Root, now)
	if err != nil {
		closeKey(h)
		return nil, err
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		closeKey(h)
		return nil, err
	}
	kept, err := keptCRLShards(ctx, store, cfg, now, log)
	if err != nil {
		store.Close()
		closeKey(h)
		return nil, err
	}
	issuers, err := openIssuers(cfg, h, now, kept)
	if err != nil {
		store.Close()
		closeKey(h)
		return nil, err
	}
	issuer := issuers.active
	closeKeys := func() { closeKey(h); issuers.close() }
	warnOnlineRoot(log, dd)
	tlsCert, err := serverCertificate(cfg, issuer, now)
	if err != nil {
		store.Close()
		closeKeys()
		return nil, fmt.Errorf("server.tls: %w", err)
	}
	vlog, err := newVerifiableLog(ctx, cfg, store, log)
	if err != nil {
		store.Close()
		closeKeys()
		return nil, err
	}
	trail, err := openAudit(cfg, log)
	if err != nil {
		vlog.close()
		store.Close()
		closeKeys()
		return nil, err
	}
	trail.vlog = vlog
	s := &Server{cfg: cfg, configPath: opts.ConfigFile, ownListeners: opts.OtherListeners,
		log: log, logLevel: logLevel, store: store, baseURL: base, caKey: h, issuers: issuers, audit: trail, vlog: vlog}
	var renew func(time.Time) (tls.Certificate, error)
	if cfg.Server.TLS.CertFile == "" {
		renew = func(at time.Time) (tls.Certificate, error) { return serverCertificate(cfg, issuer, at) }
	}
	s.serving = newServingCert(tlsCert, renew, time.Now, log)
	s.useRootCRL(rootCRL, "start")
	s.metrics = admin.NewMetrics(admin.MetricsOptions{CA: func() *ca.CA { return issuer }, Store: s.store,
		CRLRegenerations: func() int64 {
			if s.svc == nil {
				return 0
			}
			return s.svc.CRLRegenerations()
		},
		CRLsSigned: func() map[acme.CRLScope]int64 {
			if s.svc == nil {
				return nil
			}
			return s.svc.CRLsSigned()
		}})
	s.metrics.SetBuildInfo(opts.Build.Version, opts.Build.ShortCommit(), opts.Build.GoVersion)
	s.metrics.SetAuditFailures(trail.sink.Failures)
	if vlog != nil {
		vlog.setMetrics(s.metrics)
	}
	if err := s.wire(ctx, issuer); err != nil {
		s.Close()
		return nil, err
	}
	warnProfiles(log, s.svc.Profiles(), leafEKUs(cfg, s.svc.Profiles()), h.Intermediate, now)
	warnConstraints(log, cfg.CA, h, created)
	s.warnTenantsEAB(ctx)
	if h.Root != nil {
		s.root = ca.EncodeCertPEM(h.Root.Raw)
		s.rootFP = fingerprint(h.Root)
	}
	s.health = s.newHealth()
	s.watchProbes()
	s.web, err = web.New(web.Config{
		BaseURL: base, MaxBodyBytes: cfg.Server.MaxBodyBytes, Website: cfg.ACME.Website,
		TermsOfService: cfg.ACME.TermsOfService, CAAIdentities: cfg.directoryCAAIdentities(), RootPEM: s.root, RootCRL: s.rootCRLDER,
		Persist:       cfg.directoryPersist(),
		OrdersPerPage: cfg.ACME.OrdersPerPage, Health: s.health,
		Profiles:        func() map[string]string { return s.svc.Profiles().Descriptions() },
		TransparencyLog: s.logHandler(),
	}, s.svc, s.nonces, log)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.web.SetEdge(s.limiterNow.edge)
	s.web.SetRateLimits(s.limits)
	s.limits.SetObserver(s.metrics)
	s.web.SetObserver(s.metrics)
	s.started = now
	if err := s.newAdmin(); err != nil {
		s.Close()
		return nil, fmt.Errorf("admin: %w", err)
	}
	return s, nil
}

// wire opens the limiter backend and builds the ACME service.
func (s *Server) wire(ctx context.Context, issuer *ca.CA) error {
	var err error
	if s.backend, err = openLimiterBackend(ctx, s.cfg, s.log); err != nil {
		return fmt.Errorf("rate-limiting: %w", err)
	}
	if s.nonces, err = s.openNonces(s.store); err != nil {
		return err
	}
	s.guardCounts() // limiter_recover.go
	ls, err := newLimiterSettings(s.cfg, s.backend)
	if err != nil {
		return err
	}
	if err := s.applyLimiter(ls, s.cfg.RateLimiting.Global.Enabled); err != nil {
		return err
	}
	if err := s.restoreCountsAtStart(ctx); err != nil {
		return fmt.Errorf("rate-limiting: restoring the exact counts from the store: %w", err)
	}
	s.limiterNow = ls
	s.conns = web.NewConnLimiter(connLimitsOf(s.cfg.Server.Connections, ls), s.metrics)
	s.httpConns = web.NewConnLimiter(connLimitsOf(s.cfg.Server.Connections, ls), s.metrics)
	if s.validator, err = newValidator(s.cfg); err != nil {
		return err
	}
	s.svc, err = newService(s.cfg, s.store, issuer, s.issuers.issuers, s.validator, s.limits, s.metrics, s.audit, s.log)
	// Accounts bound with an EAB key take the overrides of its label.
	s.limits.SetEABKeys(s.store)
	return err
}

// newValidator makes the challenge validator of cfg. Its egress policy
// does not know weir's own listeners until Serve binds them
// (applyEgress), before any validation runs.
func newValidator(cfg Config) (*challenge.Validator, error) {
	v, err := challenge.New(challenge.Config{
		HTTPPort: cfg.Challenges.HTTP01.Port, TLSALPNPort: cfg.Challenges.TLSALPN01.Port,
		Resolver: cfg.Challenges.DNSResolver, Timeout: cfg.Challenges.Timeout, Enabled: challengeTypes(cfg),
		CAA:              challenge.CAAConfig{Enabled: cfg.Challenges.CAA.Enabled, Identities: cfg.caaIdentities()},
		AccountURIPrefix: web.AccountURL(externalURL(cfg), ""), Persist: cfg.persistConfig(),
		Egress: cfg.Challenges.Egress,
	})
	if err != nil {
		return nil, fmt.Errorf("challenges: %w", err)
	}
	return v, nil
}

// newService wires the ACME use cases: policy, validator and limits.
func newService(cfg Config, store acme.Store, issuer *ca.CA, issuers []acme.Issuer, v acme.Validator, limits acme.Limits, obs acme.Observer, audit acme.Auditor, log *slog.Logger) (*acme.Service, error) {
	policy, err := acme.NewPolicy(cfg.CA.Policy)
	if err != nil {
		return nil, err
	}
	profiles, err := newProfiles(cfg.CA)
	if err != nil {
		return nil, err
	}
	return acme.New(acme.Config{
		MaxIdentifiers: cfg.ACME.MaxIdentifiers, OrderLifetime: cfg.ACME.OrderLifetime,
		PendingAuthzLifetime: cfg.ACME.PendingAuthzLifetime, ValidAuthzLifetime: cfg.ACME.ValidAuthzLifetime,
		Challenges: offeredChallenges(cfg), ValidationWorkers: cfg.ACME.ValidationWorkers,
		ValidationWorkersPerAccount: cfg.ACME.ValidationWorkersPerAccount,
		ValidationTimeout:           cfg.Challenges.Timeout + 5*time.Second,
		TermsOfService:              cfg.ACME.TermsOfService, CRLInterval: cfg.CA.CRLInterval, CRLDelay: cfg.CA.CRLDelay,
		Owner: newOwner(), // leases.go
		EAB:   cfg.ACME.ExternalAccountBinding,
		Log:   cfg.Transparency.Enabled,
	}, acme.Live{Policy: policy, Profiles: profiles, ARI: cfg.ACME.RenewalInfo, RenewEarly: cfg.CA.renewEarly(), Backdate: cfg.CA.Backdate},
		acme.Deps{Store: store, CA: issuer, Issuers: issuers, Validator: v, Limits: limits, Observer: obs, Audit: audit, Log: log})
}

// BaseURL is the base URL of the ACME API, as the directory names it
// (server.external-url, else derived from server.listen).
func (s *Server) BaseURL() string { return s.baseURL }

// RootPEM is the PEM of the CA's root certificate, as /root.pem serves it.
func (s *Server) RootPEM() []byte { return s.root }

// Intermediate is the certificate of the CA's intermediate (the active
// issuer's), which signs the certificates and their CRLs.
func (s *Server) Intermediate() *x509.Certificate { return s.svc.CA().Hierarchy().Intermediate }

// Close releases the stores.
func (s *Server) Close() error {
	var err error
	if s.backend != nil {
		err = s.backend.close()
	}
	if s.closeNonces != nil {
		if cerr := s.closeNonces(); err == nil {
			err = cerr
		}
	}
	if cerr := s.store.Close(); err == nil {
		err = cerr
	}
	if cerr := s.audit.close(); err == nil {
		err = cerr
	}
	if cerr := s.vlog.close(); err == nil {
		err = cerr
	}
	if cerr := closeKey(s.caKey); err == nil {
		err = cerr
	}
	if s.issuers != nil {
		if cerr := s.issuers.close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Serve runs the listeners of ls (Listen binds them as the configuration
// says: the ACME listener over HTTPS, the admin listener, the plain-HTTP
// listener of the public artefacts) and the background work until ctx
// ends, then shuts down gracefully: in-flight requests and validations
// finish. ls.Admin is not served when the admin listener is off
// (admin.enabled: false), and may then be nil; a nil ls.HTTP is not
// served.
func (s *Server) Serve(ctx context.Context, ls Listeners) error {
	if s.admin != nil && ls.Admin != nil {
		// Under reloadMu: a reload reads it (ownAddrPorts).
		s.reloadMu.Lock()
		s.adminLn = ls.Admin
		s.reloadMu.Unlock()
	}
	// A reload may run from here on (its watcher starts below, SIGHUP at
	// any time): read the configuration under its lock.
	cfg := s.currentConfig()
	hs := s.httpServer(s.web.Handler())
	publicHTTPServer(hs, cfg.Server.Connections) // connconfig.go
	hs.TLSConfig = s.serving.tlsConfig("h2", "http/1.1")
	servers := []*http.Server{hs}
	// Before any validation runs: the policy now knows the listeners.
	if err := s.applyEgress(cfg.Challenges.Egress); err != nil {
		return err
	}
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	bgDone := make(chan error, 6)
	go func() { bgDone <- s.svc.Run(bg) }()
	go func() { bgDone <- runNonces(bg, s.nonces, s.svc) }()
	go func() {
		if s.adminLn == nil || s.admin == nil {
			bgDone <- nil
			return
		}
		if err := s.serveAdmin(bg, s.adminLn); err != nil {
			s.log.Error("admin listener stopped", "err", err)
		}
		bgDone <- nil
	}()
	go func() { bgDone <- s.runLimiterHousekeeping(bg) }()
	go func() { bgDone <- s.runWriteHealth(bg) }()
	go func() { bgDone <- s.runLog(bg) }()
	go s.watchConfig(bg)
	if s.adminCreds != nil {
		go s.adminCreds.Run(bg, s.log)
	}
	serveErr := make(chan error, 2)
	go func() { serveErr <- hs.ServeTLS(s.conns.Listener(ls.ACME), "", "") }()
	if ls.HTTP != nil {
		// The public artefacts over plain HTTP, bounded as the ACME
		// listener is, with caps of their own.
		ps := s.httpServer(s.web.ArtefactHandler())
		publicHTTPServer(ps, cfg.Server.Connections)
		servers = append(servers, ps)
		go func() { serveErr <- ps.Serve(s.httpConns.Listener(ls.HTTP)) }()
	}
	var err error
	select {
	case <-ctx.Done():
		s.log.Info("shutting down")
	case err = <-serveErr:
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, srv := range servers {
		if serr := srv.Shutdown(shutCtx); serr != nil && err == nil {
			err = serr
		}
	}
	stopBG()
	for range cap(bgDone) {
		<-bgDone
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
