// SPDX-License-Identifier: Apache-2.0

// Package ratelimit counts: it decides whether a request fits weir's rate
// limits and keeps the state that decision needs.
//
// There are two kinds of limit. A rate limit is a token bucket run by the
// generic cell rate algorithm (GCRA): its whole state is one theoretical
// arrival time (TAT) per bucket, and refill is continuous. An exact-count
// limit is a set of members (certificate serials, authorization IDs), each
// with a timestamp, counted against a maximum. Each [Name] is one of the two;
// its [Limit] holds the numbers.
//
// The layers, from the request inward:
//
//   - [Edge] is the in-process per-IP bucket that web checks before any JWS
//     work. It is per replica, allocation-free and bounded in memory.
//   - [Limiter] turns a list of [Request] values into one [Batch] and hands it
//     to a [Source]. Spend is all or nothing over every bucket of the request;
//     the [Decision] names the strictest denial and lists all of them.
//   - [Source] is the storage contract: it applies a whole batch atomically,
//     reading its own clock inside the atomic section, so several replicas
//     sharing one backend never admit more than the limit and decide alike
//     even when their clocks are skewed. [MemorySource] is the in-process
//     implementation; SQLite and Redis implement the same contract and pass
//     the same suite (package sourcetest).
//
// Times inside the package, in [Op], [OpResult], [Bucket] and [Edge.Allow],
// are int64 microseconds since the Unix epoch (time.Time.UnixMicro), and
// durations are int64 microseconds. Integers keep the arithmetic exact and
// identical in Go, SQL and Lua; microseconds match Redis TIME.
package ratelimit
