// SPDX-License-Identifier: Apache-2.0

package ratelimit

import "math"

// Recorder returns a Limiter on the same Source, keys and refill rates as l
// whose bursts and maxima never deny: its Spend records something admitted
// elsewhere even when l's bucket is already empty. A rate bucket's TAT moves
// on by cost×emission as for any spend, so it may end beyond l's capacity
// and l then denies until it has refilled; a count bucket gains the member
// whatever its size. The degraded limiter (acme/limits) records in its
// in-process fallback what the backend admitted, so that the fallback's
// later decisions count it however the two raced.
func (l *Limiter) Recorder() *Limiter {
	p := l.cfg.clone()
	for n, lim := range p.Limits {
		p.Limits[n] = unbounded(lim)
	}
	for k, lim := range p.Overrides {
		p.Overrides[k] = unbounded(lim)
	}
	return &Limiter{cfg: p, src: l.src, now: l.now}
}

// unbounded is lim with a capacity no spend reaches: the largest burst a
// valid limit may have (maxSpan of tokens, a century) and the largest
// count.
func unbounded(lim Limit) Limit {
	switch lim.Kind() {
	case KindRate:
		lim.Burst = maxSpan.Microseconds() / max(lim.Emission(), 1)
	case KindCount:
		lim.Max = math.MaxInt32
	}
	return lim
}
