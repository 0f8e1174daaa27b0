// SPDX-License-Identifier: Apache-2.0

package redis

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/weir-pki/weir/acme"
)

// DefaultNoncePrefix is the key prefix of nonces when NonceOptions.Prefix
// is empty.
const DefaultNoncePrefix = "weir:nonce:"

// nonceBytes is the randomness of a nonce: 128 bits, so that guessing one
// that another client was given is hopeless.
const nonceBytes = 16

// nonceChars is the length of a nonce: nonceBytes in unpadded base64url.
var nonceChars = base64.RawURLEncoding.EncodedLen(nonceBytes)

// NonceOptions configures a [NonceStore].
type NonceOptions struct {
	// Lifetime is how long a nonce stays redeemable (acme.nonce-lifetime);
	// it must be positive.
	Lifetime time.Duration
	// Prefix starts every key; empty means DefaultNoncePrefix
	// ("weir:nonce:"). It must not contain "{" or "}".
	Prefix string
	// HashTag is the Redis Cluster hash tag of every key, as for the
	// rate-limit keys; empty means DefaultHashTag ("weir"), so on a
	// Cluster the nonces live on the shard of the limiter's buckets, and
	// one shard's failure is one failure. It must not contain "{" or "}".
	HashTag string
	// Timeout bounds each Nonce and Redeem on top of the caller's
	// context; 0 means DefaultTimeout (1 s) and a negative value none.
	Timeout time.Duration
}

// Validate reports every problem with o, joined with errors.Join.
func (o NonceOptions) Validate() error {
	var errs []error
	if o.Lifetime <= 0 {
		errs = append(errs, fmt.Errorf("redis: nonces: lifetime must be positive, got %v", o.Lifetime))
	}
	if strings.ContainsAny(o.Prefix, "{}") {
		errs = append(errs, fmt.Errorf("redis: nonces: prefix %q must not contain braces", o.Prefix))
	}
	if strings.ContainsAny(o.HashTag, "{}") {
		errs = append(errs, fmt.Errorf("redis: nonces: hash tag %q must not contain braces", o.HashTag))
	}
	return errors.Join(errs...)
}

// NonceStore is an acme.NonceStore kept in Redis, shared by every replica
// that uses the same Redis, prefix and hash tag: a nonce issued by one
// replica redeems exactly once on any of them (RFC 8555 §6.5).
//
// A nonce is 128 random bits in base64url. Issuing it is one SET NX PX
// (the key expires with the nonce, on the Redis server's clock) and
// redeeming it one GETDEL (Redis 6.2 or later), which Redis runs
// atomically: of any number of concurrent redemptions, on any replicas,
// exactly one gets the key. A string that is not the shape of a nonce is
// refused without a round trip. The store never retries (see [NewClient]):
// an error reaches the caller, which answers badNonce (Redeem) or goes
// without a Replay-Nonce (Nonce); see docs/ARCHITECTURE.md, "Nonces".
type NonceStore struct {
	client    goredis.UniversalClient
	keyPrefix string // Prefix + "{" + HashTag + "}"
	lifetime  time.Duration
	timeout   time.Duration
	err       error // invalid options, returned by every call
}

var _ acme.NonceStore = (*NonceStore)(nil)

// NewNonceStore returns a nonce store on client (see [NewClient]).
// Invalid options make every call fail; check them at startup with
// [NonceOptions.Validate].
func NewNonceStore(client goredis.UniversalClient, opts NonceOptions) *NonceStore {
	s := &NonceStore{client: client, lifetime: opts.Lifetime, timeout: opts.Timeout, err: opts.Validate()}
	if client == nil {
		s.err = errors.Join(s.err, errors.New("redis: nonces: nil client"))
	}
	prefix, tag := opts.Prefix, opts.HashTag
	if prefix == "" {
		prefix = DefaultNoncePrefix
	}
	if tag == "" {
		tag = DefaultHashTag
	}
	s.keyPrefix = prefix + "{" + tag + "}"
	if s.timeout == 0 {
		s.timeout = DefaultTimeout
	}
	return s
}

// Key returns the Redis key of a nonce, such as
// "weir:nonce:{weir}q3iW2d0tq7w7l8Wc3uI1GQ".
func (s *NonceStore) Key(nonce string) string { return s.keyPrefix + nonce }

// context bounds ctx by the store's timeout.
func (s *NonceStore) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout < 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}

// Nonce implements acme.NonceStore.
func (s *NonceStore) Nonce(ctx context.Context) (string, error) {
	if s.err != nil {
		return "", s.err
	}
	var b [nonceBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("redis: nonces: random: %w", err)
	}
	n := base64.RawURLEncoding.EncodeToString(b[:])
	ctx, cancel := s.context(ctx)
	defer cancel()
	// NX: a key that exists would be a 128-bit collision, never in
	// practice, but a nonce must never be handed out twice.
	ok, err := s.client.SetNX(ctx, s.Key(n), "1", s.lifetime).Result()
	if err != nil {
		return "", fmt.Errorf("redis: nonces: issue: %w", err)
	}
	if !ok {
		return "", errors.New("redis: nonces: issue: the random nonce already exists")
	}
	return n, nil
}

// Redeem implements acme.NonceStore.
func (s *NonceStore) Redeem(ctx context.Context, n string) (bool, error) {
	if s.err != nil {
		return false, s.err
	}
	if !isNonce(n) {
		return false, nil
	}
	ctx, cancel := s.context(ctx)
	defer cancel()
	err := s.client.GetDel(ctx, s.Key(n)).Err()
	switch {
	case errors.Is(err, goredis.Nil):
		return false, nil // unknown, expired or already redeemed
	case err != nil:
		return false, fmt.Errorf("redis: nonces: redeem: %w", err)
	}
	return true, nil
}

// Ping checks that the Redis holding the nonces answers, within the
// store's timeout, for a readiness probe. On a Cluster it pings the master
// that owns the store's hash tag.
func (s *NonceStore) Ping(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	ctx, cancel := s.context(ctx)
	defer cancel()
	var err error
	if cc, ok := s.client.(*goredis.ClusterClient); ok {
		var node *goredis.Client
		if node, err = cc.MasterForKey(ctx, s.keyPrefix); err == nil {
			err = node.Ping(ctx).Err()
		}
	} else {
		err = s.client.Ping(ctx).Err()
	}
	if err != nil {
		return fmt.Errorf("redis: nonces: ping: %w", err)
	}
	return nil
}

// isNonce reports whether n has the shape of a nonce this store issues:
// exactly nonceChars characters of the base64url alphabet. Anything else
// cannot be one, and is not sent to Redis (nor used to build a key).
func isNonce(n string) bool {
	if len(n) != nonceChars {
		return false
	}
	for i := range len(n) {
		c := n[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
