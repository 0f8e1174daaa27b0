// SPDX-License-Identifier: Apache-2.0

package redis

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
)

// Ping checks that the Redis holding the source's buckets answers, within
// the source's timeout, for a readiness probe. On a Cluster it pings the
// master that owns the source's hash tag, the only node its scripts use.
func (s *RateLimitSource) Ping(ctx context.Context) error {
	if err := s.ready(ctx, "ping"); err != nil {
		return err
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
		return s.fail(ctx, "ping", err)
	}
	return nil
}
