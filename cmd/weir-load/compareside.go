// SPDX-License-Identifier: Apache-2.0

// The settings of a -compare side: BUILD[+SETTING…].

package main

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// sideSettings are what a -compare side may change of the run besides its
// build, so that one build can be compared with itself under two
// settings: the log on and off, the nonces on PostgreSQL or on Redis, the
// limits off and on, the embedded store against PostgreSQL and Redis.
type sideSettings struct {
	log        bool   // +log
	nonces     string // +nonces=BACKEND ("": the -nonces flag's)
	rateLimits string // +ratelimits=MODE ("": the -ratelimits flag's)
	storage    string // +storage=sqlite|postgres ("": the -storage flag's)
	redis      string // +redis=MODE ("": the -redis flag's)
}

// parseSide splits a -compare side into its build (a binary or a git
// revision) and the settings after it, each after a "+": log,
// nonces=BACKEND, ratelimits=MODE, storage=STORE, redis=MODE.
func parseSide(name string) (build string, s sideSettings, err error) {
	parts := strings.Split(name, "+")
	build = parts[0]
	if build == "" {
		return "", s, fmt.Errorf("-compare: side %q names no build", name)
	}
	for _, p := range parts[1:] {
		key, val, hasVal := strings.Cut(p, "=")
		switch {
		case key == "log" && !hasVal:
			s.log = true
		case key == "nonces" && hasVal:
			if err := checkNonces(val); err != nil {
				return "", s, fmt.Errorf("-compare: side %q: %w", name, err)
			}
			s.nonces = val
		case key == "ratelimits" && hasVal:
			if _, ok := rateLimitBlocks[val]; !ok {
				return "", s, fmt.Errorf("-compare: side %q: ratelimits %q is not off, high, default or server", name, val)
			}
			s.rateLimits = val
		case key == "storage" && hasVal:
			if val != "sqlite" && val != "postgres" {
				return "", s, fmt.Errorf("-compare: side %q: storage %q is not sqlite or postgres", name, val)
			}
			s.storage = val
		case key == "redis" && hasVal:
			if err := checkRedis(val); err != nil {
				return "", s, fmt.Errorf("-compare: side %q: %w", name, err)
			}
			s.redis = val
		default:
			return "", s, fmt.Errorf("-compare: side %q: %q is not log, nonces=BACKEND, ratelimits=MODE, storage=STORE or redis=MODE", name, p)
		}
	}
	return build, s, nil
}

// apply is o with the side's settings in effect.
func (s sideSettings) apply(o options) options {
	o.log = o.log || s.log
	if s.nonces != "" {
		o.nonces = s.nonces
	}
	if s.rateLimits != "" {
		o.rateLimits = s.rateLimits
	}
	if s.storage != "" {
		o.storage = s.storage
	}
	if s.redis != "" {
		o.redis = s.redis
	}
	return o
}

// checkSide checks that the storage goes with the rest of o: PostgreSQL
// needs its DSN, and only PostgreSQL is shared by several replicas or
// counted. parseFlags asks it of the flags, compare of each side once its
// settings apply.
func checkSide(o options) error {
	switch {
	case o.storage == "postgres" && o.postgresDSN == "":
		return errors.New("-storage postgres needs -postgres-dsn or WEIR_TEST_POSTGRES_DSN")
	case o.replicas > 1 && o.storage != "postgres":
		return errors.New("-replicas: more than one replica needs a shared store: -storage postgres")
	case o.countPG && o.storage != "postgres":
		return errors.New("-count-pg counts PostgreSQL's statements: it needs -storage postgres")
	}
	return nil
}

// checkRedis checks a -redis value: auto, private, none or host:port.
func checkRedis(mode string) error {
	switch mode {
	case "auto", "private", "none":
		return nil
	}
	if _, _, err := net.SplitHostPort(mode); err != nil {
		return fmt.Errorf("redis %q is not auto, private, none or host:port", mode)
	}
	return nil
}

// checkNonces checks a -nonces value: one of acme.nonces.backend's.
func checkNonces(b string) error {
	switch b {
	case "auto", "memory", "redis", "postgres":
		return nil
	}
	return fmt.Errorf("nonces %q is not auto, memory, redis or postgres", b)
}
