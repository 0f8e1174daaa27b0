// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// A duplicate-certificate bucket's key is the account ID and the SHA-256
// of its name set (ratelimit.FQDNSetKey), which says nothing to a person.
// The dashboard finds the names again in the store: the name sets of the
// account's certificates within the limit's window, then the identifiers
// of its newest orders (an order counts before its certificate exists),
// hashed the same way until one matches.

// nameSetOrders is how many of an account's newest orders are read when
// its certificates do not explain a key.
const nameSetOrders = 100

// nameSets resolves duplicate-certificate keys, reading each account's
// name sets once per request.
type nameSets struct {
	s   *Server
	ctx context.Context
	// byAccount maps an account ID to its known sets, by key.
	byAccount map[string]map[string][]string
}

func (s *Server) nameSets(ctx context.Context) *nameSets {
	return &nameSets{s: s, ctx: ctx, byAccount: map[string]map[string][]string{}}
}

// names returns the names of the duplicate-certificate bucket with this
// key; nil when limit is another limit or the names are not found.
func (n *nameSets) names(limit, key string) []string {
	if limit != ratelimit.DuplicateCertificate.String() {
		return nil
	}
	account, _, ok := strings.Cut(key, ":")
	if !ok {
		return nil
	}
	sets, ok := n.byAccount[account]
	if !ok {
		sets = n.load(account)
		n.byAccount[account] = sets
	}
	return sets[key]
}

// load reads the name sets of account, keyed by their FQDNSetKey. A store
// error leaves the keys unexplained: the names are an aid, the buckets are
// shown without them.
func (n *nameSets) load(account string) map[string][]string {
	out := map[string][]string{}
	add := func(names []string) {
		if k := ratelimit.FQDNSetKey(account, names); out[k] == nil {
			out[k] = names
		}
	}
	inv, ok := n.s.cfg.Service.Inventory()
	if !ok {
		return out
	}
	var since time.Time
	if w := n.s.cfg.Limits.Policy().Limits[ratelimit.DuplicateCertificate].Window; w > 0 {
		since = n.s.cfg.Now().Add(-w)
	}
	if _, sets, err := inv.RecentNames(n.ctx, acme.AccountID(account), since, 200); err == nil {
		for _, set := range sets {
			add(set)
		}
	}
	orders, _, err := inv.ListAllOrders(n.ctx, acme.OrderQuery{AccountID: acme.AccountID(account), Limit: nameSetOrders})
	if err == nil {
		for _, o := range orders {
			add(acme.IdentifierValues(o.Identifiers))
		}
	}
	return out
}

// fill sets the names of the duplicate-certificate buckets in views.
func (n *nameSets) fill(views []BucketView) {
	for i := range views {
		views[i].Names = n.names(views[i].Limit, views[i].Key)
	}
}

// shownNames is how many names a table cell lists before "+N more".
const shownNames = 3

// nameList is a name set as a table cell shows it: the first few names
// and how many more, with the whole set for the tooltip.
type nameList struct {
	Shown string
	More  int
	All   string
}

func newNameList(names []string) nameList {
	l := nameList{All: strings.Join(names, ", ")}
	if len(names) > shownNames {
		l.More = len(names) - shownNames
		names = names[:shownNames]
	}
	l.Shown = strings.Join(names, ", ")
	return l
}
