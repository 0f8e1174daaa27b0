// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/challenge"
	"github.com/weir-pki/weir/acme/renewal"
	"github.com/weir-pki/weir/ca"
)

// reloadState remembers the outcome of the last reload, for operators.
type reloadState struct {
	mu      sync.Mutex
	at      time.Time
	err     error
	restart []string
}

// configPoll is how often the config file is looked at, and configSettle
// how long a changed file must hold still before it is read: an edit takes
// effect within their sum plus the reload itself, well within 2 s.
const (
	configPoll   = time.Second
	configSettle = 100 * time.Millisecond
)

// watchConfig reloads the configuration on SIGHUP and when the file's
// content changes (polled every configPoll), until ctx ends, and reads the
// admin token file and the root CRL's again on SIGHUP and when their
// content changes. With no config file there is nothing to reload, and
// only the root CRL's file is watched.
func (s *Server) watchConfig(ctx context.Context) {
	var rootCRLRefused [sha256.Size]byte
	if s.configPath == "" {
		tick := time.NewTicker(configPoll)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				s.refreshRootCRL(&rootCRLRefused)
			}
		}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	tick := time.NewTicker(configPoll)
	defer tick.Stop()
	last := fileDigest(s.configPath)
	tokenPath := adminTokenPath(s.currentConfig())
	lastToken := fileDigest(tokenPath)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			last, lastToken = fileDigest(s.configPath), fileDigest(tokenPath)
			s.reload("SIGHUP")
			_ = s.rotateAdminToken("SIGHUP") // logged
		case <-tick.C:
			s.refreshRootCRL(&rootCRLRefused)
			// A token file that cannot be read is left alone, as the
			// config file is; a changed one is read (and refused, and
			// read again at its next change, if it is half written).
			if d := fileDigest(tokenPath); d != lastToken && d != ([sha256.Size]byte{}) {
				lastToken = d
				_ = s.rotateAdminToken("file change") // logged
			}
			// The content, not the modification time: a save within the
			// same mtime tick, or a ConfigMap's symlink swap, still counts.
			// A file that cannot be read is left alone until it can.
			d := fileDigest(s.configPath)
			if d == last || d == ([sha256.Size]byte{}) {
				continue
			}
			// An editor saving in place truncates, then writes: reload
			// only content that holds still, so that a half-written (or
			// empty, which means all defaults) file is never applied.
			select {
			case <-ctx.Done():
				return
			case <-time.After(configSettle):
			}
			if fileDigest(s.configPath) != d {
				continue // still changing: the next tick looks again
			}
			last = d
			s.reload("file change")
		}
	}
}

// fileDigest is the SHA-256 of the file at path, zero when it cannot be
// read.
func fileDigest(path string) [sha256.Size]byte {
	data, err := os.ReadFile(path)
	if err != nil {
		return [sha256.Size]byte{}
	}
	return sha256.Sum256(data)
}

// restartKeys lists what differs between two configurations but can only
// change with a restart.
func restartKeys(old, cur Config) []string {
	var keys []string
	// Compared as YAML, as the file says them: an empty list is no list.
	diff := func(key string, a, b any) {
		ya, erra := yaml.Marshal(a)
		yb, errb := yaml.Marshal(b)
		if erra != nil || errb != nil || !bytes.Equal(ya, yb) {
			keys = append(keys, key)
		}
	}
	diff("data-dir", old.DataDir, cur.DataDir)
	diff("server.listen", old.Server.Listen, cur.Server.Listen)
	diff("server.external-url", old.Server.ExternalURL, cur.Server.ExternalURL)
	diff("server.http", old.Server.HTTP, cur.Server.HTTP)
	diff("server.tls", old.Server.TLS, cur.Server.TLS)
	diff("server.max-body-bytes", old.Server.MaxBodyBytes, cur.Server.MaxBodyBytes)
	oldConns, curConns := old.Server.Connections, cur.Server.Connections
	oldConns.MaxPerIP, oldConns.MaxTotal, oldConns.FirstRequestTimeout = curConns.MaxPerIP, curConns.MaxTotal, curConns.FirstRequestTimeout
	diff("server.connections (other than max-per-ip, max-total and first-request-timeout)", oldConns, curConns)
	oldACME, curACME := old.ACME, cur.ACME
	oldACME.RenewalInfo, curACME.RenewalInfo = renewal.Config{}, renewal.Config{}
	diff("acme (other than acme.renewal-info)", oldACME, curACME)
	oldCA, curCA := old.CA, cur.CA
	oldCA.Policy, curCA.Policy = acme.PolicyConfig{}, acme.PolicyConfig{}
	oldCA.DefaultProfile, curCA.DefaultProfile, oldCA.Profiles, curCA.Profiles = "", "", nil, nil
	oldCA.Backdate, curCA.Backdate = 0, 0
	oldCA.RootCRLFile, curCA.RootCRLFile = "", ""
	oldCA.withoutRenewEarly()
	curCA.withoutRenewEarly()
	diff("ca (other than ca.policy, ca.default-profile, ca.profiles, ca.backdate, ca.root-crl-file and the issuers' renew-early)", oldCA, curCA)
	oldCh, curCh := old.Challenges, cur.Challenges
	oldCh.Egress, curCh.Egress = challenge.EgressConfig{}, challenge.EgressConfig{}
	diff("challenges (other than challenges.egress)", oldCh, curCh)
	diff("storage", old.Storage, cur.Storage)
	diff("rate-limiting.backend", old.RateLimiting.Backend, cur.RateLimiting.Backend)
	diff("rate-limiting.redis", old.RateLimiting.Redis, cur.RateLimiting.Redis)
	diff("admin", old.Admin, cur.Admin)
	diff("log.format", old.Log.Format, cur.Log.Format)
	diff("audit", old.Audit, cur.Audit)
	diff("transparency", old.Transparency, cur.Transparency)
	return keys
}

// reload reads the config file again and applies what can change live:
// the limits, whitelist, trusted proxies, CA policy, certificate profiles,
// validation egress policy, the root CRL's file (read again too) and log
// level. An invalid file is refused and the running configuration
// stays.
func (s *Server) reload(trigger string) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	old := s.cfg
	err := s.reloadLocked()
	s.audit.reloaded(trigger, old, s.cfg, s.reloaded.restart, err)
	s.reloaded.mu.Lock()
	s.reloaded.at, s.reloaded.err = time.Now(), err
	s.reloaded.mu.Unlock()
	if s.metrics != nil {
		s.metrics.ConfigReload(err == nil, time.Now())
	}
	if err != nil {
		s.log.Error("configuration reload refused; the running configuration stays", "trigger", trigger, "file", s.configPath, "err", err)
		return err
	}
	s.log.Info("configuration reloaded", "trigger", trigger, "file", s.configPath, "needs_restart", s.reloaded.restart)
	return nil
}

func (s *Server) reloadLocked() error {
	data, err := os.ReadFile(s.configPath)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	// The problems as weir check-config prints them, each with its line
	// and key.
	cfg, err := ParseConfig(s.configPath, data)
	if err != nil {
		return err
	}
	if cfg.DataDir, err = filepath.Abs(cfg.DataDir); err != nil {
		return err
	}
	restart := restartKeys(s.cfg, cfg)
	ls, err := newLimiterSettings(cfg, s.backend)
	if err != nil {
		return err
	}
	policy, err := acme.NewPolicy(cfg.CA.Policy)
	if err != nil {
		return err
	}
	// ca.certificate-lifetime needs a restart: profiles that leave their
	// lifetime out keep the running one.
	profCA := cfg.CA
	profCA.CertificateLifetime = s.cfg.CA.CertificateLifetime
	profiles, err := newProfiles(profCA)
	if err != nil {
		return err
	}
	if errs := profCA.validateBackdate(); errs != nil {
		return errors.Join(errs...) // against the lifetimes in force
	}
	// The active intermediate must allow what the profiles put in the
	// certificates it signs, as at start (intermediateUse).
	if err := ca.CheckLeafEKUs(s.svc.CA().Hierarchy().Intermediate, leafEKUs(cfg, profiles), false); err != nil {
		return fmt.Errorf("ca.profiles: %w", err)
	}
	level, err := parseLevel(cfg.Log.Level)
	if err != nil {
		return fmt.Errorf("log.level: %w", err)
	}
	egress, err := s.newEgress(cfg.Challenges.Egress)
	if err != nil {
		return err
	}
	// In the running data directory: a new data-dir needs a restart.
	rootCRLCfg := cfg
	rootCRLCfg.DataDir = s.cfg.DataDir
	rootCRL, err := loadRootCRL(rootCRLCfg, s.caRoot(), time.Now())
	if served := s.rootCRL.Load(); errors.Is(err, errRootCRLStale) && served != nil && served.digest == rootCRL.digest {
		err = nil // the one served since the start (startRootCRL): no change, and no reason to refuse the rest
	}
	if err != nil {
		return err
	}
	if err := s.applyLimiter(ls, cfg.RateLimiting.Global.Enabled); err != nil {
		return err
	}
	s.limiterNow = ls
	s.conns.Set(connLimitsOf(cfg.Server.Connections, ls))
	s.httpConns.Set(connLimitsOf(cfg.Server.Connections, ls))
	s.svc.SetLive(acme.Live{Policy: policy, Profiles: profiles, ARI: cfg.ACME.RenewalInfo, RenewEarly: cfg.CA.renewEarly(), Backdate: cfg.CA.Backdate})
	warnProfiles(s.log, profiles, leafEKUs(cfg, profiles), s.svc.CA().Hierarchy().Intermediate, time.Now())
	warnConstraints(s.log, cfg.CA, s.svc.CA().Hierarchy(), true)
	s.validator.SetEgress(egress)
	s.useRootCRL(rootCRL, "reload")
	s.logLevel.Set(level)
	// Keep what needs a restart as it runs; take the live parts.
	backend, redis := s.cfg.RateLimiting.Backend, s.cfg.RateLimiting.Redis
	s.cfg.RateLimiting = cfg.RateLimiting
	s.cfg.RateLimiting.Backend, s.cfg.RateLimiting.Redis = backend, redis
	s.cfg.Server.TrustedProxies = cfg.Server.TrustedProxies
	s.cfg.Server.Connections.MaxPerIP = cfg.Server.Connections.MaxPerIP
	s.cfg.Server.Connections.MaxTotal = cfg.Server.Connections.MaxTotal
	s.cfg.Server.Connections.FirstRequestTimeout = cfg.Server.Connections.FirstRequestTimeout
	s.cfg.CA.Policy = cfg.CA.Policy
	s.cfg.CA.DefaultProfile, s.cfg.CA.Profiles, s.cfg.CA.Backdate = cfg.CA.DefaultProfile, cfg.CA.Profiles, cfg.CA.Backdate
	s.cfg.CA.takeRenewEarly(cfg.CA)
	s.cfg.CA.RootCRLFile = cfg.CA.RootCRLFile
	s.cfg.ACME.RenewalInfo = cfg.ACME.RenewalInfo
	s.cfg.Challenges.Egress = cfg.Challenges.Egress
	s.cfg.Log.Level = cfg.Log.Level
	s.reloaded.restart = restart
	return nil
}
