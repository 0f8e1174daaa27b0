// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"slices"
	"sync"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// The object cache.
//
// In WAL mode every commit makes each reader connection drop its whole
// page cache at its next read, so under load every read of an order or an
// authorization fetched each page again with a system call. The store
// keeps, in memory, the orders and authorizations (with their challenges)
// it has read or created recently, exactly as a read from the database
// would return them, and serves GetOrder, GetAuthz and GetChallenge from
// there.
//
// The cache is kept true by the writer, the one goroutine that writes the
// database (writer.go), and by Open's lock (lock.go): no other process
// writes the database while the store is open. A write that changes a
// cached object records, while it runs in the transaction, how the object
// changes (an edit: the same change its SQL makes, with values normalised
// as a read returns them). Once the transaction commits, and before any
// caller of the group hears of it, the writer applies the edits of the
// operations that succeeded. A failed COMMIT empties the cache.
//
// A read that misses fills the cache with what it read only if no edit was
// applied since it started (gen is unchanged): otherwise what it read may
// be older than an edit it would overwrite. Reads return copies, which
// their callers may change.
type objCache struct {
	mu       sync.Mutex
	gen      uint64 // bumped by every application of edits
	max      int    // entries per map but certs, beyond which one is evicted
	maxCerts int    // entries of certs
	authzs   map[acme.AuthzID]*acme.Authorization
	orders   map[acme.OrderID]*acme.Order
	chAuthz  map[acme.ChallengeID]acme.AuthzID // a challenge's authorization
	// certs are the certificates issued lately (FinalizeOrder), which
	// their clients download next; accounts are filled by reads.
	certs    map[string]*acme.Certificate
	accounts map[acme.AccountID]*acme.Account
	// chains maps an issuer chain's PEM to its issuer_chains id, for the
	// chains committed since Open: rows of issuer_chains are never changed
	// or deleted, so an entry stays true; there is one per intermediate.
	chains map[string]int64
}

// cacheEntries bounds each map of the cache: orders and authorizations in
// flight, which is what is read again and again, are far fewer.
// cacheCerts bounds the certificates, a few KiB each with their chains.
const (
	cacheEntries = 8192
	cacheCerts   = 1024
)

func newObjCache(max, maxCerts int) *objCache {
	return &objCache{
		max:      max,
		maxCerts: maxCerts,
		authzs:   make(map[acme.AuthzID]*acme.Authorization),
		orders:   make(map[acme.OrderID]*acme.Order),
		chAuthz:  make(map[acme.ChallengeID]acme.AuthzID),
		certs:    make(map[string]*acme.Certificate),
		accounts: make(map[acme.AccountID]*acme.Account),
		chains:   make(map[string]int64),
	}
}

// cacheEdit changes the cache after a commit; it runs with c.mu held.
type cacheEdit func(c *objCache)

// generation returns the generation a read that may fill the cache
// starts in.
func (c *objCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// apply runs the edits of the committed operations, in order.
func (c *objCache) apply(ops []*writeOp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, op := range ops {
		if op.err != nil || op.panic != nil {
			continue // rolled back to its savepoint: it changed nothing
		}
		for _, e := range op.edits {
			e(c)
		}
	}
}

// reset empties the cache: a COMMIT failed, so what the database holds is
// not known here.
func (c *objCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.authzs)
	clear(c.orders)
	clear(c.chAuthz)
	clear(c.certs)
	clear(c.accounts)
	clear(c.chains)
}

// chainID returns the issuer_chains id of the issuer chain pem, if known.
func (c *objCache) chainID(pem []byte) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.chains[string(pem)]
	return id, ok
}

// editChainID records the id of the issuer chain pem.
func editChainID(pem []byte, id int64) cacheEdit {
	key := string(pem)
	return func(c *objCache) { c.chains[key] = id }
}

// cachedCopy returns clone's copy of m[k], or nil; it takes c.mu.
func cachedCopy[K comparable, T any](c *objCache, m map[K]*T, k K, clone func(*T) *T) *T {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := m[k]; ok {
		return clone(v)
	}
	return nil
}

// authz returns a copy of the cached authorization id, or nil.
func (c *objCache) authz(id acme.AuthzID) *acme.Authorization {
	return cachedCopy(c, c.authzs, id, cloneAuthz)
}

// challenge returns a copy of the cached challenge id, or nil.
func (c *objCache) challenge(id acme.ChallengeID) *acme.Challenge {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch := c.cachedChallenge(id); ch != nil {
		return cloneChallenge(ch)
	}
	return nil
}

// order returns a copy of the cached order id, or nil.
func (c *objCache) order(id acme.OrderID) *acme.Order { return cachedCopy(c, c.orders, id, cloneOrder) }

// cert returns a copy of the cached certificate serial, or nil.
func (c *objCache) cert(serial string) *acme.Certificate {
	return cachedCopy(c, c.certs, serial, cloneCert)
}

// account returns a copy of the cached account id, or nil.
func (c *objCache) account(id acme.AccountID) *acme.Account {
	return cachedCopy(c, c.accounts, id, cloneAccount)
}

// fillAccount caches a, as read by a read that started in generation gen.
func (c *objCache) fillAccount(a *acme.Account, gen uint64) {
	fillCopy(c, c.accounts, a.ID, a, gen, cloneAccount)
}

// fillCopy sets m[k] to clone's copy of v, as read by a read that
// started in generation gen, unless an edit was applied since; it takes
// c.mu.
func fillCopy[K comparable, T any](c *objCache, m map[K]*T, k K, v *T, gen uint64, clone func(*T) *T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		putBounded(m, k, clone(v), c.max)
	}
}

// fillAuthz caches a, as read by a read that started in generation gen.
func (c *objCache) fillAuthz(a *acme.Authorization, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.putAuthz(cloneAuthz(a))
	}
}

// fillOrder caches o, as read by a read that started in generation gen.
func (c *objCache) fillOrder(o *acme.Order, gen uint64) {
	fillCopy(c, c.orders, o.ID, o, gen, cloneOrder)
}

// putAuthz caches a, which the cache owns from now on; c.mu is held.
func (c *objCache) putAuthz(a *acme.Authorization) {
	if _, ok := c.authzs[a.ID]; !ok && len(c.authzs) >= c.max {
		for id, old := range c.authzs { // an arbitrary one
			for _, ch := range old.Challenges {
				delete(c.chAuthz, ch.ID)
			}
			delete(c.authzs, id)
			break
		}
	}
	c.authzs[a.ID] = a
	for _, ch := range a.Challenges {
		c.chAuthz[ch.ID] = a.ID
	}
}

// putOrder caches o, which the cache owns from now on; c.mu is held.
func (c *objCache) putOrder(o *acme.Order) { putBounded(c.orders, o.ID, o, c.max) }

// putBounded sets m[k] to v, first evicting an arbitrary entry if k is
// new and m holds max entries.
func putBounded[K comparable, V any](m map[K]V, k K, v V, max int) {
	if _, ok := m[k]; !ok && len(m) >= max {
		for old := range m {
			delete(m, old)
			break
		}
	}
	m[k] = v
}

// cachedChallenge returns the cached challenge id, to be edited in place,
// or nil; c.mu is held.
func (c *objCache) cachedChallenge(id acme.ChallengeID) *acme.Challenge {
	a, ok := c.authzs[c.chAuthz[id]]
	if !ok {
		return nil
	}
	for _, ch := range a.Challenges {
		if ch.ID == id {
			return ch
		}
	}
	return nil
}

// dropChallengeAuthz forgets the authorization of challenge id; c.mu is
// held.
func (c *objCache) dropChallengeAuthz(id acme.ChallengeID) {
	if aid, ok := c.chAuthz[id]; ok {
		delete(c.authzs, aid)
	}
}

// The edits of the writes. Each makes the change its statement makes, and
// forgets the object when it cannot.

// editChallenge sets challenge id's status, error (encoded as stored, nil
// for NULL), validation time and update time.
func editChallenge(id acme.ChallengeID, status acme.Status, problem *string, validated, updated int64) cacheEdit {
	return func(c *objCache) {
		ch := c.cachedChallenge(id)
		if ch == nil {
			return
		}
		prob, err := decodeProblem(problem)
		if err != nil {
			c.dropChallengeAuthz(id)
			return
		}
		ch.Status, ch.Error = status, prob
		ch.Validated, ch.UpdatedAt = sqlrow.FromNanos(validated), sqlrow.FromNanos(updated)
	}
}

// editStartChallenge moves challenge id to processing at updated.
func editStartChallenge(id acme.ChallengeID, updated int64) cacheEdit {
	return func(c *objCache) {
		if ch := c.cachedChallenge(id); ch != nil {
			ch.Status, ch.UpdatedAt = acme.StatusProcessing, sqlrow.FromNanos(updated)
		}
	}
}

// editAuthz sets authorization id's status and expiry.
func editAuthz(id acme.AuthzID, status acme.Status, expires int64) cacheEdit {
	return func(c *objCache) {
		if a, ok := c.authzs[id]; ok {
			a.Status, a.Expires = status, sqlrow.FromNanos(expires)
		}
	}
}

// editOrder sets order id's status, error (encoded as stored) and
// certificate serial.
func editOrder(id acme.OrderID, status acme.Status, problem *string, serial string) cacheEdit {
	return func(c *objCache) {
		o, ok := c.orders[id]
		if !ok {
			return
		}
		prob, err := decodeProblem(problem)
		if err != nil {
			delete(c.orders, id)
			return
		}
		o.Status, o.Error, o.CertSerial = status, prob, serial
	}
}

// editFinalizeOrder makes order id valid with the certificate serial.
func editFinalizeOrder(id acme.OrderID, serial string) cacheEdit {
	return func(c *objCache) {
		if o, ok := c.orders[id]; ok {
			o.Status, o.CertSerial = acme.StatusValid, serial
		}
	}
}

// editPutCert caches x, built as a read of the row just stored returns it;
// the edit owns it.
func editPutCert(x *acme.Certificate) cacheEdit {
	return func(c *objCache) { putBounded(c.certs, x.Serial, x, c.maxCerts) }
}

// editDropCert forgets certificate serial, whose revocation or renewal
// window a write changed.
func editDropCert(serial string) cacheEdit {
	return func(c *objCache) { delete(c.certs, serial) }
}

// editDropAccount forgets account id, whose contact, status or key a
// write changed.
func editDropAccount(id acme.AccountID) cacheEdit {
	return func(c *objCache) { delete(c.accounts, id) }
}

// editStartFinalize moves order id to processing with csr, which the
// edit owns.
func editStartFinalize(id acme.OrderID, csr []byte) cacheEdit {
	return func(c *objCache) {
		if o, ok := c.orders[id]; ok {
			o.Status, o.CSR = acme.StatusProcessing, csr
		}
	}
}

// editPutOrder caches o and authzs, built as reads of the rows just
// inserted return them; the edit owns them.
func editPutOrder(o *acme.Order, authzs []*acme.Authorization) cacheEdit {
	return func(c *objCache) {
		c.putOrder(o)
		for _, a := range authzs {
			c.putAuthz(a)
		}
	}
}

// decodeProblem decodes a problem document as a read does.
func decodeProblem(doc *string) (*acme.Problem, error) {
	return sqlrow.FromNullableJSON[acme.Problem]("cached problem", doc)
}

// cloneProblem copies p deeply enough that changing the copy, its
// identifier or its subproblems leaves p alone.
func cloneProblem(p *acme.Problem) *acme.Problem {
	if p == nil {
		return nil
	}
	q := *p
	if p.Identifier != nil {
		id := *p.Identifier
		q.Identifier = &id
	}
	if p.RateLimitInfo != nil {
		info := *p.RateLimitInfo
		q.RateLimitInfo = &info
	}
	q.Algorithms = slices.Clone(p.Algorithms)
	q.Subproblems = cloneEach(p.Subproblems, cloneProblem)
	return &q
}

// cloneEach returns the copies that clone makes of the elements of s, nil
// for nil.
func cloneEach[T any](s []*T, clone func(*T) *T) []*T {
	if s == nil {
		return nil
	}
	out := make([]*T, len(s))
	for i, x := range s {
		out[i] = clone(x)
	}
	return out
}

func cloneChallenge(ch *acme.Challenge) *acme.Challenge {
	x := *ch
	x.Error = cloneProblem(ch.Error)
	return &x
}

func cloneAuthz(a *acme.Authorization) *acme.Authorization {
	x := *a
	x.Challenges = cloneEach(a.Challenges, cloneChallenge)
	return &x
}

func cloneOrder(o *acme.Order) *acme.Order {
	x := *o
	x.Identifiers = slices.Clone(o.Identifiers)
	x.AuthzIDs = slices.Clone(o.AuthzIDs)
	x.Error = cloneProblem(o.Error)
	x.CSR = slices.Clone(o.CSR)
	return &x
}

func cloneCert(x *acme.Certificate) *acme.Certificate {
	y := *x
	y.DER = slices.Clone(x.DER)
	y.ChainPEM = slices.Clone(x.ChainPEM)
	y.Names = slices.Clone(x.Names)
	y.Validations = slices.Clone(x.Validations)
	return &y
}

func cloneAccount(a *acme.Account) *acme.Account {
	x := *a
	x.Key = slices.Clone(a.Key)
	x.Contact = slices.Clone(a.Contact)
	return &x
}
