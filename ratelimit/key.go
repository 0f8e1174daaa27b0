// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// BucketKey returns the storage key of one bucket: the limit's name, ":" and
// the key, as in "order-creation:acct-42". Every [Source] stores buckets
// under this string, and [Policy.Overrides] is keyed by it.
func BucketKey(name Name, key string) string {
	return name.String() + ":" + key
}

// IPPrefix returns the group of client addresses that the per-IP limits
// count as one client, the one place of that rule: an IPv4 address alone
// (its /32), an IPv6 address's /64 (the interface identifier cleared),
// because one subscriber routinely holds a whole /64 and could otherwise
// take a fresh bucket or connection per address. An IPv4-mapped IPv6
// address is unmapped first, so it is its IPv4 address, and a zone is
// dropped. The invalid Addr gives the invalid Prefix.
//
// [IPKey] spells the group as a bucket key, the [Edge] as its table key,
// and web's connection caps count open connections by it.
func IPPrefix(addr netip.Addr) netip.Prefix {
	addr = addr.Unmap().WithZone("")
	switch {
	case addr.Is4():
		return netip.PrefixFrom(addr, 32)
	case addr.Is6():
		return netip.PrefixFrom(addr, 64).Masked()
	default:
		return netip.Prefix{}
	}
}

// IPKey returns the key of a client address for the IP-keyed limits: its
// [IPPrefix], an IPv4 address as is ("192.0.2.7"), an IPv6 address as its
// /64 ("2001:db8:1:2::/64"). The invalid Addr gives "", which the [Limiter]
// rejects.
func IPKey(addr netip.Addr) string {
	p := IPPrefix(addr)
	switch {
	case !p.IsValid():
		return ""
	case p.Addr().Is4():
		return p.Addr().String()
	default:
		return p.String()
	}
}

// FQDNSetKey returns the duplicate-certificate key of an account and a set of
// names: the account ID, ":" and the hex SHA-256 of the names joined by
// commas after lowercasing, removing a trailing dot, sorting and removing
// duplicates. Callers pass canonical names already; normalising again keeps
// the key independent of the order of the request. A wildcard keeps its
// "*." label, so {"*.example.com"} and {"example.com"} are different sets.
func FQDNSetKey(accountID string, names []string) string {
	set := make([]string, len(names))
	for i, n := range names {
		set[i] = strings.ToLower(strings.TrimSuffix(n, "."))
	}
	slices.Sort(set)
	set = slices.Compact(set)
	sum := sha256.Sum256([]byte(strings.Join(set, ",")))
	return accountID + ":" + hex.EncodeToString(sum[:])
}

// FailedValidationKey returns the failed-validation key of an account and a
// hostname: the account ID, ":" and the lowercased hostname. A wildcard keeps
// its "*." label, so "*.example.com" and "example.com" are counted apart.
func FailedValidationKey(accountID, hostname string) string {
	return accountID + ":" + strings.ToLower(strings.TrimSuffix(hostname, "."))
}

// RegisteredDomainKey returns the registered-domain key of an identifier:
// its eTLD+1 by the public suffix list ("www.example.co.uk" gives
// "example.co.uk"), after lowercasing and removing a trailing dot and a
// leading "*." wildcard label. An IP address is its own registered domain
// and gets its [IPKey]. A name that is itself a public suffix ("co.uk"), or
// a single label, has no registered domain and is an error.
func RegisteredDomainKey(name string) (string, error) {
	n := strings.TrimPrefix(strings.ToLower(strings.TrimSuffix(name, ".")), "*.")
	if addr, err := netip.ParseAddr(n); err == nil {
		return IPKey(addr), nil
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(n)
	if err != nil {
		return "", fmt.Errorf("ratelimit: registered domain of %q: %w", name, err)
	}
	return d, nil
}
