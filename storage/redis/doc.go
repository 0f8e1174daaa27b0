// SPDX-License-Identifier: Apache-2.0

// Package redis keeps weir's rate-limit buckets in Redis, so that several
// weir replicas share one set of limits: [RateLimitSource] implements
// ratelimit.Source and passes the same suite (package ratelimit/sourcetest)
// as the memory source. [NonceStore] keeps the replicas' Replay-Nonces, so
// that a nonce from one redeems once on any (package acme/noncetest).
//
// # One script per batch
//
// Every Apply is one EVALSHA of an embedded Lua script (apply.lua) that
// covers every bucket of the batch. Inside the script, which Redis runs
// atomically, it reads the clock with TIME, loads the buckets, decides every
// op with exactly the integer arithmetic of ratelimit.Eval (GCRA, refunds,
// exact counts and their pruning, ported line for line), and writes only if
// the whole batch is committed. Replicas whose own clocks disagree therefore
// decide alike: the only clock is the Redis primary's. [RateLimitSource.Load]
// loads the scripts at startup so that the steady state is one round trip
// per Apply; a server that lost its script cache answers NOSCRIPT, and the
// source then sends the script itself (EVAL) once. It needs Redis 6.2 or
// later (SET with PXAT).
//
// # Keys
//
// A bucket is stored under Prefix + "{" + HashTag + "}" + its bucket key,
// by default "weir:rl:{weir}order-creation:acct-42":
//
//   - a rate bucket is a string holding its TAT in microseconds, set to
//     expire just after the TAT, when the bucket is full again and holds
//     nothing worth keeping;
//   - a count bucket is a sorted set of members scored by their timestamp
//     (issue time for duplicate-certificate, expiry for
//     pending-authorizations), pruned of members that no longer count on
//     every write, and set to expire just after its last member stops
//     counting (timestamp + window).
//
// # Redis Cluster: one hash tag for the whole source
//
// A Lua script may only touch keys of one hash slot, and the all-or-nothing
// of a batch cannot be kept across slots (Redis has no cross-slot
// transaction). A new-order batch spends the account's buckets, checks
// failed-validation per hostname, and — when enabled — spends
// registered-domain buckets that every account ordering for that eTLD+1
// shares. Tagging keys by account would put one registered-domain bucket
// under as many slots as there are accounts using it, each a separate
// count: wrong for a limit whose point is to be shared. Splitting a batch by
// slot would lose atomicity. So every key of a source carries the same hash
// tag: on a single node and under Sentinel this changes nothing; on Cluster
// all rate-limit keys live on one shard. That is correct and atomic, and
// bounded by one shard's throughput (one script per decision; see
// BenchmarkRedisNewOrderBatch), which is the price of correctness.
// Deployments that need more can run several weir instances with different
// HashTag values, each limiting its own traffic.
//
// # Nonces
//
// A nonce is one key, Prefix + "{" + HashTag + "}" + the nonce, by default
// "weir:nonce:{weir}q3iW2d0tq7w7l8Wc3uI1GQ": issued by SET NX PX (it
// expires with the nonce, on the Redis server's clock) and redeemed by
// GETDEL, so one redemption wins, whichever replica it comes from. The
// same hash tag as the buckets puts them on the limiter's shard of a
// Cluster; a different NonceOptions.HashTag moves them.
//
// # Clients
//
// [NewClient] builds a go-redis UniversalClient for a single node,
// Sentinel (Config.MasterName) or Cluster (several Addrs). It turns
// go-redis's automatic retries off: a script that timed out may already
// have run, and running it again would spend twice. It also makes the
// context's deadline bound every network wait, so a slow Redis yields an
// error quickly and the Limiter's caller applies its on-backend-error
// policy. A client built elsewhere should do the same
// (ContextTimeoutEnabled, MaxRetries -1).
package redis
