// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"time"
)

// DenialGroup is identical refusals taken together: the same action
// refused by the same bucket, the same way (a wait or never). The
// dashboard shows one row per group rather than one per 429.
type DenialGroup struct {
	Action, Limit, Key string
	Never              bool
	// Count is how many of the kept denials the group holds.
	Count int
	// First and Last are the oldest and newest of them.
	First, Last time.Time
	// RetryAfter, Remaining and Denied are the newest denial's.
	RetryAfter time.Duration
	Remaining  int64
	Denied     int
	// Names are the names of a duplicate-certificate bucket.
	Names []string
}

// groupDenials groups denials (newest first, as Recent429s returns them)
// into groups ordered by their newest denial.
func groupDenials(denials []Denial) []DenialGroup {
	type id struct {
		action, limit, key string
		never              bool
	}
	var out []DenialGroup
	at := map[id]int{}
	for _, d := range denials {
		k := id{d.Action, d.Limit, d.Key, d.Never}
		i, ok := at[k]
		if !ok {
			at[k] = len(out)
			out = append(out, DenialGroup{Action: d.Action, Limit: d.Limit, Key: d.Key, Never: d.Never, Count: 1,
				First: d.At, Last: d.At, RetryAfter: d.RetryAfter, Remaining: d.Remaining, Denied: d.Denied})
			continue
		}
		g := &out[i]
		g.Count++
		if d.At.Before(g.First) {
			g.First = d.At
		}
		if d.At.After(g.Last) {
			g.Last = d.At
		}
	}
	return out
}

// recentGroups is every kept denial, grouped, with the names of the
// duplicate-certificate buckets.
func (s *Server) recentGroups(ctx context.Context) []DenialGroup {
	g := groupDenials(s.cfg.Metrics.Recent429s(0))
	ns := s.nameSets(ctx)
	for i := range g {
		g[i].Names = ns.names(g[i].Limit, g[i].Key)
	}
	return g
}
