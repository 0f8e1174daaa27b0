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

// IPKey returns the key of a client address for the IP-keyed limits: an IPv4
// address as is ("192.0.2.7"), an IPv6 address masked to its /64
// ("2001:db8:1:2::/64"), because one subscriber routinely holds a whole /64
// and could otherwise take a fresh bucket per request. An IPv4-mapped IPv6
// address is unmapped first, and a zone is dropped. The invalid Addr gives
// "", which the [Limiter] rejects.
func IPKey(addr netip.Addr) string {
	addr = addr.Unmap().WithZone("")
	switch {
	case addr.Is4():
		return addr.String()
	case addr.Is6():
		return netip.PrefixFrom(addr, 64).Masked().String()
	default:
		return ""
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
