// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/weir-pki/weir/acme"
)

// newShards is the number of CRL shards new certificates name: 0 (the
// issuer's one CRL) for ca.crl-shards 1, else ca.crl-shards.
func newShards(c CAConfig) int {
	if c.CRLShards > 1 {
		return c.CRLShards
	}
	return 0
}

// keptCRLShards asks the store, for each configured issuer, which CRL
// shards its unexpired certificates name, and returns by issuer the
// highest one beyond those new certificates name (newShards), for which
// weir keeps making and serving the CRLs (openIssuers), logging which and
// why. A certificate's distribution point is fixed at issuance: lowering
// ca.crl-shards must not drop the CRL it names, or its revocation would be
// on none. New certificates never name a shard beyond newShards, so what
// is kept at start stays enough until the next start.
func keptCRLShards(ctx context.Context, store acme.CRLShardLister, cfg Config, now time.Time, log *slog.Logger) (map[string]int, error) {
	ids := []string{acme.DefaultIssuer}
	for _, is := range cfg.CA.Issuers {
		ids = append(ids, is.ID)
	}
	n := newShards(cfg.CA)
	kept := map[string]int{}
	for _, id := range ids {
		inUse, err := store.CRLShardsInUse(ctx, id, now)
		if err != nil {
			return nil, fmt.Errorf("ca.crl-shards: the CRL shards of issuer %s in use: %w", id, err)
		}
		var beyond []int
		for _, k := range inUse {
			if k > n {
				beyond = append(beyond, k)
			}
		}
		if len(beyond) == 0 {
			continue
		}
		kept[id] = beyond[len(beyond)-1]
		log.Warn(fmt.Sprintf("ca.crl-shards is %d, but unexpired certificates of issuer %s name CRL shards beyond it: "+
			"weir keeps making and serving the CRLs of shards %d to %d at their URLs until those certificates expire",
			cfg.CA.CRLShards, id, n+1, kept[id]), "issuer", id, "shards_named", beyond)
	}
	return kept, nil
}
