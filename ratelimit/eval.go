// SPDX-License-Identifier: Apache-2.0

package ratelimit

// Eval is the decision procedure of a [Source] written in Go: it applies ops
// in order at time now to buckets, which must map every key of ops to a
// private copy of its stored state (an empty Bucket when nothing is stored).
// The ops must be valid ([Batch.Validate]).
//
// Eval updates the buckets in place as it goes, so an op sees the effects of
// the ops before it on the same key. When the result is committed, the
// caller stores the bucket of every op whose result is Applied, deleting it
// when it is [Bucket.Idle]; otherwise it discards the copies. A SQLite
// backend runs exactly this between reading the buckets and writing them in
// one transaction; the memory source runs it under its shard locks.
//
// Count ops prune members that no longer count (lazy expiry), so a stored
// count bucket holds only live members after any write.
func Eval(now int64, ops []Op, buckets map[string]*Bucket) *BatchResult {
	res := &BatchResult{Now: now, Committed: true, Results: make([]OpResult, len(ops))}
	for i := range ops {
		res.Results[i] = evalOp(now, &ops[i], buckets[ops[i].Key])
		// A TAT in the past means a full bucket, as does a forgotten one:
		// clamp, so every backend reports the same instant.
		res.Results[i].TAT = max(res.Results[i].TAT, now)
		if !res.Results[i].Allowed {
			res.Committed = false
		}
	}
	if !res.Committed {
		for i := range res.Results {
			res.Results[i].Applied = false
		}
	}
	return res
}

// evalOp applies one op to b and reports its result.
func evalOp(now int64, op *Op, b *Bucket) OpResult {
	switch op.Kind {
	case OpSpend, OpCheck:
		v := gcra(b.TAT, now, op.Limit.Emission(), op.Limit.Burst, op.Cost)
		r := OpResult{Allowed: v.allowed, Never: v.never, Remaining: v.remaining, RetryAfter: v.retryAfter, TAT: v.tat}
		if v.allowed && op.Kind == OpSpend {
			b.TAT = v.tat
			r.Applied = true
		}
		return r
	case OpRefund:
		e := op.Limit.Emission()
		tat := gcraRefund(b.TAT, now, e, op.Cost)
		r := OpResult{Allowed: true, Applied: tat != b.TAT, TAT: tat, Remaining: tokensLeft(tat, now, e, op.Limit.Burst*e)}
		b.TAT = tat
		return r
	case OpAdd, OpCount:
		w := op.Limit.WindowMicros()
		pruneMembers(b.Members, now, w)
		ts := op.MemberTime
		if ts == 0 && op.Kind == OpAdd {
			ts = now
		}
		v := countAdd(b.Members, now, w, op.Limit.Max, op.Member, ts)
		r := OpResult{Allowed: v.allowed, Remaining: v.remaining, RetryAfter: v.retryAfter, TAT: countReset(b.Members, w)}
		switch {
		case v.store && op.Kind == OpAdd:
			if b.Members == nil {
				b.Members = make(map[string]int64)
			}
			b.Members[op.Member] = ts
			r.Applied = true
			r.TAT = max(r.TAT, ts+w)
		case v.store && ts != 0:
			r.TAT = max(r.TAT, ts+w)
		}
		return r
	case OpRemove:
		w := op.Limit.WindowMicros()
		pruneMembers(b.Members, now, w)
		_, present := b.Members[op.Member]
		delete(b.Members, op.Member)
		return OpResult{Allowed: true, Applied: present, Remaining: countRemaining(b.Members, op.Limit.Max), TAT: countReset(b.Members, w)}
	}
	// Unreachable for a validated op.
	return OpResult{}
}
