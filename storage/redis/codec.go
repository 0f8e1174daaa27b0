// SPDX-License-Identifier: Apache-2.0

package redis

import (
	"fmt"

	"github.com/weir-pki/weir/ratelimit"
)

// This file turns a batch into the script's KEYS and ARGV and its flat
// integer replies back into results. The layout is documented at the top
// of apply.lua and get.lua.

// The script's op codes, independent of ratelimit.OpKind's values.
const (
	codeSpend  = 1
	codeCheck  = 2
	codeRefund = 3
	codeAdd    = 4
	codeCount  = 5
	codeRemove = 6
)

// maxFieldsPerOp is the most ARGV entries an op takes (a count op; a rate
// op takes 5), and resultsPerOp the number of reply entries per op.
const (
	maxFieldsPerOp = 6
	resultsPerOp   = 6
)

// opCode returns the script's code for a valid op kind.
func opCode(k ratelimit.OpKind) int {
	switch k {
	case ratelimit.OpSpend:
		return codeSpend
	case ratelimit.OpCheck:
		return codeCheck
	case ratelimit.OpRefund:
		return codeRefund
	case ratelimit.OpAdd:
		return codeAdd
	case ratelimit.OpCount:
		return codeCount
	default:
		return codeRemove
	}
}

// encode returns the distinct Redis keys of ops and the script's ARGV. The
// ops must be valid. It rejects what the script cannot compute exactly
// (values beyond 2^53) and a key used both as a rate and a count bucket,
// which cannot be one Redis value; it clamps costs where that cannot change
// the result.
func (s *RateLimitSource) encode(ops []ratelimit.Op) ([]string, []any, error) {
	// The distinct bucket keys, found by a linear search in batches of
	// the usual size (a new-order batch has 7 of 9) and a map beyond.
	var index map[string]int
	if len(ops) > 16 {
		index = make(map[string]int, len(ops))
	}
	bucketKeys := make([]string, 0, len(ops))
	lookup := func(key string) (int, bool) {
		if index != nil {
			k, ok := index[key]
			return k, ok
		}
		for k, b := range bucketKeys {
			if b == key {
				return k, true
			}
		}
		return 0, false
	}
	kinds := make([]ratelimit.Kind, 0, len(ops))
	keys := make([]string, 0, len(ops))
	args := make([]any, 0, 2+maxFieldsPerOp*len(ops))
	args = append(args, s.now(), len(ops))
	for i := range ops {
		op := &ops[i]
		kind := op.Kind.Kind()
		k, ok := lookup(op.Key)
		switch {
		case !ok:
			k = len(keys)
			if index != nil {
				index[op.Key] = k
			}
			bucketKeys = append(bucketKeys, op.Key)
			keys = append(keys, s.Key(op.Key))
			kinds = append(kinds, kind)
		case kinds[k] != kind:
			return nil, nil, fmt.Errorf("redis: ratelimit: op %d (%s %q): the key is used by both rate and count ops in one batch", i, op.Kind, op.Key)
		}
		if kind == ratelimit.KindRate {
			cost := op.Cost
			if op.Kind != ratelimit.OpRefund && cost > op.Limit.Burst {
				// Never allowed whatever the cost: the script only
				// compares it with the burst.
				cost = op.Limit.Burst + 1
			}
			// A refund of at least maxExact tokens refills any bucket
			// (its TAT is less than maxExact µs ahead).
			cost = min(cost, maxExact)
			args = append(args, opCode(op.Kind), k+1, op.Limit.Emission(), op.Limit.Burst, cost)
			continue
		}
		w := op.Limit.WindowMicros()
		if op.Limit.Max > maxExact {
			return nil, nil, fmt.Errorf("redis: ratelimit: op %d (%s %q): max %d is beyond 2^53", i, op.Kind, op.Key, op.Limit.Max)
		}
		if op.MemberTime > maxExact-w {
			return nil, nil, fmt.Errorf("redis: ratelimit: op %d (%s %q): member time %d plus the window is beyond 2^53 µs", i, op.Kind, op.Key, op.MemberTime)
		}
		args = append(args, opCode(op.Kind), k+1, w, op.Limit.Max, op.Member, op.MemberTime)
	}
	if s.marker {
		keys = append(keys, s.markerKey())
		args = append(args, 1)
	}
	return keys, args, nil
}

// integer reads one integer of a script reply.
func integer(v any, what string) (int64, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("%s is %T (%v), want an integer", what, v, v)
	}
	return n, nil
}

// flag reads one 0/1 integer of a script reply.
func flag(v any, what string) (bool, error) {
	n, err := integer(v, what)
	if err == nil && n != 0 && n != 1 {
		err = fmt.Errorf("%s is %d, want 0 or 1", what, n)
	}
	return n == 1, err
}

// decodeApply parses apply.lua's reply for a batch of n ops.
func decodeApply(reply []any, n int) (*ratelimit.BatchResult, error) {
	if want := 2 + resultsPerOp*n; len(reply) != want {
		return nil, fmt.Errorf("script returned %d values for %d ops, want %d", len(reply), n, want)
	}
	res := &ratelimit.BatchResult{Results: make([]ratelimit.OpResult, n)}
	var err error
	if res.Now, err = integer(reply[0], "now"); err != nil {
		return nil, err
	}
	if res.Committed, err = flag(reply[1], "committed"); err != nil {
		return nil, err
	}
	for i := range res.Results {
		r, v := &res.Results[i], reply[2+resultsPerOp*i:2+resultsPerOp*(i+1)]
		var f [resultsPerOp]int64
		for j := range f {
			n, ok := v[j].(int64)
			if !ok || (j < 3 && n != 0 && n != 1) {
				return nil, fmt.Errorf("op %d: result %d is %T (%v), want %s", i, j, v[j], v[j], [...]string{"0 or 1", "0 or 1", "0 or 1", "an integer", "an integer", "an integer"}[j])
			}
			f[j] = n
		}
		*r = ratelimit.OpResult{Allowed: f[0] == 1, Applied: f[1] == 1, Never: f[2] == 1, Remaining: f[3], RetryAfter: f[4], TAT: f[5]}
	}
	return res, nil
}

// decodeGet parses get.lua's reply for the bucket keys keys.
func decodeGet(reply []any, keys []string) (*ratelimit.Snapshot, error) {
	if len(reply) < 1+len(keys) {
		return nil, fmt.Errorf("script returned %d values for %d keys", len(reply), len(keys))
	}
	now, err := integer(reply[0], "now")
	if err != nil {
		return nil, err
	}
	snap := &ratelimit.Snapshot{Now: now, Buckets: make(map[string]ratelimit.Bucket, len(keys))}
	rest := reply[1:]
	next := func(what string) (any, error) {
		if len(rest) == 0 {
			return nil, fmt.Errorf("reply ends before %s", what)
		}
		v := rest[0]
		rest = rest[1:]
		return v, nil
	}
	nextInt := func(what string) (int64, error) {
		v, err := next(what)
		if err != nil {
			return 0, err
		}
		return integer(v, what)
	}
	for _, key := range keys {
		kind, err := nextInt(key + " kind")
		if err != nil {
			return nil, err
		}
		switch kind {
		case 0:
		case 1:
			tat, err := nextInt(key + " tat")
			if err != nil {
				return nil, err
			}
			if tat > now {
				snap.Buckets[key] = ratelimit.Bucket{TAT: tat}
			}
		case 2:
			n, err := nextInt(key + " member count")
			if err != nil {
				return nil, err
			}
			if n < 0 || n > int64(len(rest)/2) {
				return nil, fmt.Errorf("%s: %d members in a reply of %d values", key, n, len(rest))
			}
			b := ratelimit.Bucket{Members: make(map[string]int64, n)}
			for range n {
				m, _ := next(key + " member")
				member, ok := m.(string)
				if !ok {
					return nil, fmt.Errorf("%s: member is %T, want a string", key, m)
				}
				if b.Members[member], err = nextInt(key + " member time"); err != nil {
					return nil, err
				}
			}
			snap.Buckets[key] = b
		default:
			return nil, fmt.Errorf("%s: unknown bucket kind %d", key, kind)
		}
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d values left over", len(rest))
	}
	return snap, nil
}
