// SPDX-License-Identifier: Apache-2.0

// The settings of a -compare side: BUILD[+SETTING…].

package main

import (
	"fmt"
	"strings"
)

// sideSettings are what a -compare side may change of the run besides its
// build, so that one build can be compared with itself under two
// settings: the log on and off, the nonces on PostgreSQL or on Redis, the
// limits off and on.
type sideSettings struct {
	log        bool   // +log
	nonces     string // +nonces=BACKEND ("": the -nonces flag's)
	rateLimits string // +ratelimits=MODE ("": the -ratelimits flag's)
}

// parseSide splits a -compare side into its build (a binary or a git
// revision) and the settings after it, each after a "+": log,
// nonces=BACKEND, ratelimits=MODE.
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
				return "", s, fmt.Errorf("-compare: side %q: ratelimits %q is not off, high or server", name, val)
			}
			s.rateLimits = val
		default:
			return "", s, fmt.Errorf("-compare: side %q: %q is not log, nonces=BACKEND or ratelimits=MODE", name, p)
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
	return o
}

// checkNonces checks a -nonces value: one of acme.nonces.backend's.
func checkNonces(b string) error {
	switch b {
	case "auto", "memory", "redis", "postgres":
		return nil
	}
	return fmt.Errorf("nonces %q is not auto, memory, redis or postgres", b)
}
