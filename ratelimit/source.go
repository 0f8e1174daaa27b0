// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"maps"
)

// Source stores buckets and applies batches of operations to them. It is the
// contract every backend implements (memory, SQLite, Redis) and the suite in
// package sourcetest checks.
//
// Apply is atomic against every other Apply on overlapping keys from any
// process: several weir replicas sharing one backend must never admit more
// than a limit. The source reads its own clock inside the atomic section
// (Redis TIME, the SQLite writer's clock, the memory source's now) and
// returns it, so replicas with skewed clocks decide alike and every
// Retry-After is computed from the same reading as the decision. A Go
// backend gets the arithmetic from [Eval]; the Redis script mirrors it.
type Source interface {
	// Apply evaluates b.Ops in order, each seeing the effects of the ones
	// before it, at one reading of the source's clock. If every op is
	// allowed the writes are committed together; if any op is denied
	// (including a check), nothing is written. A denial is a result, not an
	// error; an error means nothing was written and nothing was decided.
	Apply(ctx context.Context, b *Batch) (*BatchResult, error)
	// Get returns the stored state of the given bucket keys, read-only,
	// for status displays. Keys with no stored state are absent, and so
	// may be idle buckets (full, or without counting members) that the
	// backend has not yet expired.
	Get(ctx context.Context, keys []string) (*Snapshot, error)
	// Reset deletes a bucket, making it fresh (an administrator's action).
	Reset(ctx context.Context, key string) error
}

// ErrUnwritable is wrapped by the error of a Source that cannot persist a
// batch because its storage cannot be written (a full disk, a read-only
// file, an I/O error): a fault of the host, not a slow backend, so the
// caller refuses the request whatever on-backend-error says.
var ErrUnwritable = errors.New("the limiter's storage cannot be written")

// OpKind is what an [Op] does to its bucket.
type OpKind uint8

const (
	// OpSpend takes Cost tokens from a rate bucket.
	OpSpend OpKind = iota + 1
	// OpCheck computes what OpSpend would decide, and writes nothing.
	OpCheck
	// OpRefund gives Cost tokens back to a rate bucket; its TAT never goes
	// below now. Always allowed.
	OpRefund
	// OpAdd adds Member, timestamped MemberTime, to a count bucket.
	OpAdd
	// OpCount computes what OpAdd would decide, and writes nothing.
	OpCount
	// OpRemove deletes Member from a count bucket. Always allowed.
	OpRemove
)

// String returns the op's name ("spend", "check", …).
func (k OpKind) String() string {
	switch k {
	case OpSpend:
		return "spend"
	case OpCheck:
		return "check"
	case OpRefund:
		return "refund"
	case OpAdd:
		return "add"
	case OpCount:
		return "count"
	case OpRemove:
		return "remove"
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// Kind returns the kind of bucket the op works on.
func (k OpKind) Kind() Kind {
	switch k {
	case OpSpend, OpCheck, OpRefund:
		return KindRate
	case OpAdd, OpCount, OpRemove:
		return KindCount
	}
	return KindInvalid
}

// Op is one operation of a [Batch] on one bucket.
type Op struct {
	// Kind is what the op does.
	Kind OpKind
	// Key is the bucket key, as built by [BucketKey].
	Key string
	// Limit is the size of the bucket, with any override applied. A rate op
	// needs a rate limit and a count op a count limit.
	Limit Limit
	// Cost is the number of tokens for OpSpend and OpRefund (at least 1)
	// and OpCheck (0 asks for the status only). Count ops ignore it.
	Cost int64
	// Member identifies the member for OpAdd and OpRemove (required) and
	// OpCount (optional: a member already counted is admitted).
	Member string
	// MemberTime is the member's timestamp for OpAdd and OpCount, in
	// microseconds since the Unix epoch: the issue time for
	// duplicate-certificate, the expiry for pending-authorizations. For
	// OpAdd, 0 means the source's own now, which is what an issue time
	// wants and is rejected for a limit without a window (its members carry
	// their expiry). For OpCount, 0 means a member that counts.
	MemberTime int64
}

// Validate reports whether the op is well formed. Sources call it (through
// [Batch.Validate]) before doing anything.
func (o *Op) Validate() error {
	var errs []error
	if o.Key == "" {
		errs = append(errs, errors.New("empty bucket key"))
	}
	switch k := o.Kind.Kind(); {
	case k == KindInvalid:
		errs = append(errs, fmt.Errorf("unknown op kind %d", uint8(o.Kind)))
	case o.Limit.Kind() != k:
		errs = append(errs, fmt.Errorf("%s needs a %s limit, got %s", o.Kind, k, o.Limit.Kind()))
	default:
		for _, p := range o.Limit.problems() {
			errs = append(errs, errors.New(p))
		}
	}
	switch o.Kind {
	case OpSpend, OpRefund:
		if o.Cost < 1 {
			errs = append(errs, fmt.Errorf("%s cost must be at least 1, got %d", o.Kind, o.Cost))
		}
	case OpCheck:
		if o.Cost < 0 {
			errs = append(errs, fmt.Errorf("check cost must not be negative, got %d", o.Cost))
		}
	case OpAdd, OpRemove:
		if o.Member == "" {
			errs = append(errs, fmt.Errorf("%s needs a member", o.Kind))
		}
		if o.Kind == OpAdd && o.Limit.Window == 0 && o.MemberTime == 0 {
			errs = append(errs, errors.New("add to a limit without a window needs the member's expiry as its time"))
		}
	}
	if o.MemberTime < 0 {
		errs = append(errs, fmt.Errorf("negative member time %d", o.MemberTime))
	}
	return errors.Join(errs...)
}

// Batch is the unit of atomicity: every op of one request, over every bucket
// it touches. One Apply, one Lua script, one SQLite transaction.
type Batch struct {
	// Ops are applied in order.
	Ops []Op
}

// Validate reports every malformed op of the batch, naming its index and
// key, joined with errors.Join; nil if the batch may be applied.
func (b *Batch) Validate() error {
	var errs []error
	for i := range b.Ops {
		if err := b.Ops[i].Validate(); err != nil {
			errs = append(errs, fmt.Errorf("ratelimit: op %d (%s %q): %w", i, b.Ops[i].Kind, b.Ops[i].Key, err))
		}
	}
	return errors.Join(errs...)
}

// BatchResult is the outcome of one Apply.
type BatchResult struct {
	// Now is the source's clock, read once inside the atomic section, in
	// microseconds since the Unix epoch. Every result is relative to it.
	Now int64
	// Committed reports that every op was allowed and the writes were
	// stored. When false nothing was written.
	Committed bool
	// Results holds one result per op, in the order of Batch.Ops.
	Results []OpResult
}

// OpResult is the outcome of one op.
type OpResult struct {
	// Allowed reports that the op fits its limit. Refunds and removes are
	// always allowed.
	Allowed bool
	// Applied reports that the op changed stored state: a committed spend,
	// an add of a new member, a refund that moved the TAT, a remove of a
	// present member. An idempotent re-add is not applied, so refunding
	// it does not remove a member someone else added.
	Applied bool
	// Never reports a rate op whose cost exceeds the bucket's burst: no
	// wait will make it fit.
	Never bool
	// Remaining is the tokens (rate) or member slots (count) left after the
	// op, or that would be left for a check.
	Remaining int64
	// RetryAfter is the exact time in microseconds from Now until the op
	// would be allowed; 0 when allowed or Never.
	RetryAfter int64
	// TAT is when the bucket is entirely full again after the op (or
	// would be, for a check), never before Now: for a rate bucket its
	// theoretical arrival time, for a count bucket the instant its last
	// member leaves. A full or empty bucket reports Now, whether or not
	// the backend still stores it.
	TAT int64
}

// Bucket is the stored state of one bucket. A rate bucket sets TAT and a
// count bucket sets Members.
type Bucket struct {
	// TAT is the theoretical arrival time in microseconds since the Unix
	// epoch; 0 for a fresh bucket.
	TAT int64
	// Members maps each member to its timestamp in microseconds.
	Members map[string]int64
}

// Idle reports whether the bucket holds nothing worth storing at now: a
// full rate bucket and no members. Callers prune members first.
func (b *Bucket) Idle(now int64) bool { return b.TAT <= now && len(b.Members) == 0 }

// Clone returns a deep copy of b.
func (b *Bucket) Clone() *Bucket {
	return &Bucket{TAT: b.TAT, Members: maps.Clone(b.Members)}
}

// Snapshot is the result of [Source.Get].
type Snapshot struct {
	// Now is the source's clock when it read the buckets.
	Now int64
	// Buckets maps each requested key that has stored state to a copy of
	// it. Members are as stored: a backend may still hold members that no
	// longer count, so interpret them against the limit's window and Now.
	Buckets map[string]Bucket
}
