// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/acme"
)

// countingStore is an acme.Store that counts the calls made to it, each a
// round trip to the store. It implements every method itself (it embeds
// nothing), so a method added to acme.Store cannot go uncounted: this
// file stops compiling.
type countingStore struct {
	st     acme.Store
	calls  atomic.Int64
	writes atomic.Int64
}

// count returns the calls so far and the writes among them.
func (c *countingStore) count() (calls, writes int64) { return c.calls.Load(), c.writes.Load() }

func (c *countingStore) read()  { c.calls.Add(1) }
func (c *countingStore) write() { c.calls.Add(1); c.writes.Add(1) }

func (c *countingStore) CreateAccount(ctx context.Context, a *acme.Account) error {
	c.write()
	return c.st.CreateAccount(ctx, a)
}

func (c *countingStore) GetAccount(ctx context.Context, id acme.AccountID) (*acme.Account, error) {
	c.read()
	return c.st.GetAccount(ctx, id)
}

func (c *countingStore) GetAccountByKey(ctx context.Context, thumbprint acme.Thumbprint) (*acme.Account, error) {
	c.read()
	return c.st.GetAccountByKey(ctx, thumbprint)
}

func (c *countingStore) UpdateAccount(ctx context.Context, a *acme.Account, from acme.Status) error {
	c.write()
	return c.st.UpdateAccount(ctx, a, from)
}

func (c *countingStore) ChangeAccountKey(ctx context.Context, id acme.AccountID, old, new acme.Thumbprint, newKey []byte) error {
	c.write()
	return c.st.ChangeAccountKey(ctx, id, old, new, newKey)
}

func (c *countingStore) CreateOrder(ctx context.Context, o *acme.Order, newAuthzs []*acme.Authorization) error {
	c.write()
	return c.st.CreateOrder(ctx, o, newAuthzs)
}

func (c *countingStore) GetOrder(ctx context.Context, id acme.OrderID) (*acme.Order, error) {
	c.read()
	return c.st.GetOrder(ctx, id)
}

func (c *countingStore) ListOrders(ctx context.Context, accountID acme.AccountID, cursor string, limit int) ([]acme.OrderID, string, error) {
	c.read()
	return c.st.ListOrders(ctx, accountID, cursor, limit)
}

func (c *countingStore) UpdateOrder(ctx context.Context, o *acme.Order, from acme.Status) error {
	c.write()
	return c.st.UpdateOrder(ctx, o, from)
}

func (c *countingStore) GetAuthz(ctx context.Context, id acme.AuthzID) (*acme.Authorization, error) {
	c.read()
	return c.st.GetAuthz(ctx, id)
}

func (c *countingStore) GetAuthzs(ctx context.Context, ids []acme.AuthzID) ([]*acme.Authorization, error) {
	c.read()
	return c.st.GetAuthzs(ctx, ids)
}

func (c *countingStore) FindValidAuthz(ctx context.Context, accountID acme.AccountID, ident acme.Identifier, wildcard bool, notBefore time.Time) (*acme.Authorization, error) {
	c.read()
	return c.st.FindValidAuthz(ctx, accountID, ident, wildcard, notBefore)
}

func (c *countingStore) UpdateAuthz(ctx context.Context, a *acme.Authorization, from acme.Status) error {
	c.write()
	return c.st.UpdateAuthz(ctx, a, from)
}

func (c *countingStore) GetChallenge(ctx context.Context, id acme.ChallengeID) (*acme.Challenge, error) {
	c.read()
	return c.st.GetChallenge(ctx, id)
}

func (c *countingStore) ClaimChallenges(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*acme.Challenge, error) {
	c.write()
	return c.st.ClaimChallenges(ctx, owner, now, lease, limit)
}

func (c *countingStore) StartChallenge(ctx context.Context, id acme.ChallengeID, owner string, now time.Time, lease time.Duration) error {
	c.write()
	return c.st.StartChallenge(ctx, id, owner, now, lease)
}

func (c *countingStore) ClaimChallenge(ctx context.Context, id acme.ChallengeID, owner string, now time.Time, lease time.Duration) error {
	c.write()
	return c.st.ClaimChallenge(ctx, id, owner, now, lease)
}

func (c *countingStore) ReleaseChallenge(ctx context.Context, id acme.ChallengeID, owner string) error {
	c.write()
	return c.st.ReleaseChallenge(ctx, id, owner)
}

func (c *countingStore) TryLease(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error) {
	c.write()
	return c.st.TryLease(ctx, name, owner, now, ttl)
}

func (c *countingStore) ReleaseLease(ctx context.Context, name, owner string) error {
	c.write()
	return c.st.ReleaseLease(ctx, name, owner)
}

func (c *countingStore) StartFinalize(ctx context.Context, id acme.OrderID, owner string, csr []byte, now time.Time, lease time.Duration) error {
	c.write()
	return c.st.StartFinalize(ctx, id, owner, csr, now, lease)
}

func (c *countingStore) ClaimOrders(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*acme.Order, error) {
	c.write()
	return c.st.ClaimOrders(ctx, owner, now, lease, limit)
}

func (c *countingStore) FinalizeOrder(ctx context.Context, cert *acme.Certificate) error {
	c.write()
	return c.st.FinalizeOrder(ctx, cert)
}

func (c *countingStore) GetCertificate(ctx context.Context, serial string) (*acme.Certificate, error) {
	c.read()
	return c.st.GetCertificate(ctx, serial)
}

func (c *countingStore) RevokeCertificate(ctx context.Context, serial string, reason int, at time.Time, logEntry []byte) error {
	c.write()
	return c.st.RevokeCertificate(ctx, serial, reason, at, logEntry)
}

func (c *countingStore) ListRevoked(ctx context.Context, now time.Time) ([]acme.Revocation, error) {
	c.read()
	return c.st.ListRevoked(ctx, now)
}

func (c *countingStore) RevokedCount(ctx context.Context) (int64, error) {
	c.read()
	return c.st.RevokedCount(ctx)
}

func (c *countingStore) RevokedCounts(ctx context.Context) (map[acme.CRLScope]int64, error) {
	c.read()
	return c.st.RevokedCounts(ctx)
}

func (c *countingStore) ListRevokedScope(ctx context.Context, scope acme.CRLScope, now time.Time) ([]acme.Revocation, error) {
	c.read()
	return c.st.ListRevokedScope(ctx, scope, now)
}

func (c *countingStore) NextCRLNumber(ctx context.Context, issuer string, shard int, floor int64) (int64, error) {
	c.write()
	return c.st.NextCRLNumber(ctx, issuer, shard, floor)
}

func (c *countingStore) ReplacingOrder(ctx context.Context, certID string) (*acme.Order, error) {
	c.read()
	return c.st.ReplacingOrder(ctx, certID)
}

func (c *countingStore) SetRenewalWindows(ctx context.Context, serials []string, start, end, at time.Time) error {
	c.write()
	return c.st.SetRenewalWindows(ctx, serials, start, end, at)
}

var _ acme.Store = (*countingStore)(nil)
