package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"sync"
	"syscall"
	"time"

	"github.com/weir-pki/weir/acme"
)

// reloadState remembers the outcome of the last reload, for operators.
type reloadState struct {
	mu      sync.Mutex
	at      time.Time
	err     error
	restart []string
}

// watchConfig reloads the configuration on SIGHUP and when the file
// changes (polled), until ctx ends. With no config file there is nothing
// to reload.
func (s *server) watchConfig(ctx context.Context) {
	if s.configPath == "" {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	last := modTime(s.configPath)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			last = modTime(s.configPath)
			s.reload("SIGHUP")
		case <-tick.C:
			if m := modTime(s.configPath); !m.Equal(last) {
				last = m
				s.reload("file change")
			}
		}
	}
}

func modTime(path string) time.Time {
	st, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// restartKeys lists what differs between two configurations but can only
// change with a restart.
func restartKeys(old, cur Config) []string {
	var keys []string
	diff := func(key string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			keys = append(keys, key)
		}
	}
	diff("data-dir", old.DataDir, cur.DataDir)
	diff("server.listen", old.Server.Listen, cur.Server.Listen)
	diff("server.external-url", old.Server.ExternalURL, cur.Server.ExternalURL)
	diff("server.tls", old.Server.TLS, cur.Server.TLS)
	diff("server.max-body-bytes", old.Server.MaxBodyBytes, cur.Server.MaxBodyBytes)
	diff("acme", old.ACME, cur.ACME)
	oldCA, curCA := old.CA, cur.CA
	oldCA.Policy, curCA.Policy = acme.PolicyConfig{}, acme.PolicyConfig{}
	diff("ca (other than ca.policy)", oldCA, curCA)
	diff("challenges", old.Challenges, cur.Challenges)
	diff("storage", old.Storage, cur.Storage)
	diff("rate-limiting.backend", old.RateLimiting.Backend, cur.RateLimiting.Backend)
	diff("rate-limiting.redis", old.RateLimiting.Redis, cur.RateLimiting.Redis)
	diff("log.format", old.Log.Format, cur.Log.Format)
	return keys
}

// reload reads the config file again and applies what can change live:
// the limits, whitelist, trusted proxies, CA policy and log level. An
// invalid file is refused and the running configuration stays.
func (s *server) reload(trigger string) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	err := s.reloadLocked()
	s.reloaded.mu.Lock()
	s.reloaded.at, s.reloaded.err = time.Now(), err
	s.reloaded.mu.Unlock()
	if err != nil {
		s.log.Error("configuration reload refused; the running configuration stays", "trigger", trigger, "file", s.configPath, "err", err)
		return err
	}
	s.log.Info("configuration reloaded", "trigger", trigger, "file", s.configPath, "needs_restart", s.reloaded.restart)
	return nil
}

func (s *server) reloadLocked() error {
	cfg, err := loadConfig(s.configPath)
	if err != nil {
		return err
	}
	if cfg.DataDir, err = filepath.Abs(cfg.DataDir); err != nil {
		return err
	}
	restart := restartKeys(s.cfg, cfg)
	ls, err := newLimiterSettings(cfg, s.backend.src)
	if err != nil {
		return err
	}
	policy, err := acme.NewPolicy(cfg.CA.Policy)
	if err != nil {
		return err
	}
	level, err := parseLevel(cfg.Log.Level)
	if err != nil {
		return fmt.Errorf("log.level: %w", err)
	}
	if err := s.applyLimiter(ls, cfg.RateLimiting.Global.Enabled); err != nil {
		return err
	}
	s.limiterNow = ls
	s.svc.SetPolicy(policy)
	s.logLevel.Set(level)
	// Keep what needs a restart as it runs; take the live parts.
	backend, redis := s.cfg.RateLimiting.Backend, s.cfg.RateLimiting.Redis
	s.cfg.RateLimiting = cfg.RateLimiting
	s.cfg.RateLimiting.Backend, s.cfg.RateLimiting.Redis = backend, redis
	s.cfg.Server.TrustedProxies = cfg.Server.TrustedProxies
	s.cfg.CA.Policy = cfg.CA.Policy
	s.cfg.Log.Level = cfg.Log.Level
	s.reloaded.restart = restart
	return nil
}
