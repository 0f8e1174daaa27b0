// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"

	"github.com/weir-pki/weir/ratelimit"
)

// Reset makes the bucket with key ("limit:key") fresh.
func (s *Server) Reset(ctx context.Context, key string) error {
	name, k, err := ratelimit.ParseBucketKey(key)
	if err != nil {
		return badRequest("%v", err)
	}
	if name == ratelimit.Global {
		ip, err := parseIPKey(k)
		if err != nil {
			return badRequest("%v", err)
		}
		if s.cfg.Edge != nil {
			s.cfg.Edge.Forget(ip)
		}
	} else if err := s.cfg.Limits.Reset(ctx, key); err != nil {
		return err
	}
	s.logAction(ctx, "admin: rate limit bucket reset", "bucket", key)
	return nil
}
