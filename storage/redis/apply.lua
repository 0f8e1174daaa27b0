-- SPDX-License-Identifier: Apache-2.0

-- apply.lua: one ratelimit.Batch, atomically. This is ratelimit.Eval
-- (eval.go, gcra.go, count.go) ported line for line; keep them in step.
--
-- KEYS:    the batch's distinct bucket keys, already prefixed and hash-tagged.
-- ARGV[1]: the clock in microseconds, or "0" to read Redis TIME. Production
--          always sends "0"; only tests send a clock (Options.Clock).
-- ARGV[2]: the number of ops; then each op's fields, 5 or 6 of them:
--          rate ops  (1 spend, 2 check, 3 refund): code, key index, emission, burst, cost
--          count ops (4 add, 5 count, 6 remove):  code, key index, window, max, member, member time
--          where the key index is 1-based into KEYS.
-- Then, optionally, "1": the source keeps an epoch marker (Options.Marker),
--          which is the last of KEYS; if it is missing (Redis restarted
--          empty) the script decides and writes nothing and fails with
--          WEIRLOST, so that weir rebuilds the exact counts first.
--
-- Returns a flat array of integers:
--   now, committed (0/1), then per op:
--   allowed, applied, never (0/1), remaining, retry after, tat
--
-- Numbers are Lua doubles: integers are exact up to 2^53, and every value
-- here stays below it (microsecond timestamps are ~1.8e15, a capacity or
-- window at most 100 years, ~3.2e15; the Go side checks member times and
-- clamps costs). Integer division goes through idiv, never a bare "/".

local SPEND, CHECK, REFUND, ADD, COUNT, REMOVE = 1, 2, 3, 4, 5, 6

local now = tonumber(ARGV[1])
local fake = now ~= 0
if not fake then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- idiv is floor(a / b) for integers a >= 0, b > 0, corrected so that a
-- rounded quotient can never be off by one.
local function idiv(a, b)
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

-- int formats an integral number with every digit (no exponent), for
-- commands that parse integers.
local function int(x)
  return string.format('%.0f', x)
end

-- tokensLeft: floor((capacity - max(tat - now, 0)) / emission), never < 0.
local function tokensLeft(tat, emission, capacity)
  local used = math.max(tat - now, 0)
  if used >= capacity then
    return 0
  end
  return idiv(capacity - used, emission)
end

-- gcra returns tat', allowed, never, retryAfter, remaining.
local function gcra(tat, emission, burst, cost)
  local capacity = burst * emission
  local base = math.max(tat, now)
  if cost > burst then
    return tat, false, true, 0, tokensLeft(base, emission, capacity)
  end
  local nxt = base + cost * emission
  local over = nxt - now - capacity
  if over > 0 then
    return tat, false, false, over, tokensLeft(base, emission, capacity)
  end
  return nxt, true, false, 0, tokensLeft(nxt, emission, capacity)
end

local function gcraRefund(tat, emission, cost)
  if tat <= now then
    return tat
  end
  if cost >= idiv(tat - now + emission - 1, emission) then
    return now
  end
  return tat - cost * emission
end

local function counts(ts, window)
  return ts > now - window
end

-- A count bucket is {m = member -> ts, n = #members, orig = as loaded, w}.
local function prune(b, window)
  for k, ts in pairs(b.m) do
    if ts ~= 0 and not counts(ts, window) then
      b.m[k] = nil
      b.n = b.n - 1
    end
  end
end

local function leaveAfter(b, window, k)
  local ts = {}
  for _, t in pairs(b.m) do
    ts[#ts + 1] = t
  end
  table.sort(ts)
  return ts[k] + window - now
end

-- countAdd returns allowed, store, retryAfter, remaining.
local function countAdd(b, window, capacity, member, ts)
  local n = b.n
  if member ~= '' and b.m[member] ~= nil then
    return true, false, 0, math.max(capacity - n, 0)
  end
  if ts ~= 0 and not counts(ts, window) then
    return true, false, 0, math.max(capacity - n, 0)
  end
  if n + 1 <= capacity then
    return true, true, 0, capacity - n - 1
  end
  return false, false, leaveAfter(b, window, n - capacity + 1), 0
end

local function countReset(b, window)
  local last = 0
  for _, ts in pairs(b.m) do
    last = math.max(last, ts + window)
  end
  return last
end

-- Buckets are loaded on first use.
local rates, sets = {}, {}
local function rateBucket(i)
  local b = rates[i]
  if b == nil then
    local v = redis.call('GET', KEYS[i])
    local tat = 0
    if v then
      tat = tonumber(v)
      if tat == nil then
        error({err = 'ERR weir ratelimit: corrupt rate bucket ' .. KEYS[i]})
      end
    end
    b = {tat = tat}
    rates[i] = b
  end
  return b
end

local function countBucket(i)
  local b = sets[i]
  if b == nil then
    local raw = redis.call('ZRANGE', KEYS[i], 0, -1, 'WITHSCORES')
    b = {m = {}, orig = {}, n = 0, w = 0}
    for j = 1, #raw, 2 do
      local ts = tonumber(raw[j + 1])
      b.m[raw[j]] = ts
      b.orig[raw[j]] = ts
      b.n = b.n + 1
    end
    sets[i] = b
  end
  return b
end

local function bit(x)
  if x then
    return 1
  end
  return 0
end

local nops = tonumber(ARGV[2])
local out = {now, 1}
local committed = true
local dirty = {}

local a = 3
for _ = 1, nops do
  local code, ki = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local p1, p2 = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local p3, member, mt
  if code <= REFUND then
    p3 = tonumber(ARGV[a + 4])
    a = a + 5
  else
    member, mt = ARGV[a + 4], tonumber(ARGV[a + 5])
    a = a + 6
  end
  local allowed, applied, never, remaining, retry, tat = false, false, false, 0, 0, 0

  if code == SPEND or code == CHECK then
    local b = rateBucket(ki)
    local t
    t, allowed, never, retry, remaining = gcra(b.tat, p1, p2, p3)
    tat = t
    if allowed and code == SPEND then
      b.tat = t
      applied = true
    end
  elseif code == REFUND then
    local b = rateBucket(ki)
    local t = gcraRefund(b.tat, p1, p3)
    allowed, applied, tat = true, t ~= b.tat, t
    remaining = tokensLeft(t, p1, p2 * p1)
    b.tat = t
  elseif code == ADD or code == COUNT then
    local b = countBucket(ki)
    local w = p1
    prune(b, w)
    local ts = mt
    if ts == 0 and code == ADD then
      ts = now
    end
    local store
    allowed, store, retry, remaining = countAdd(b, w, p2, member, ts)
    tat = countReset(b, w)
    if store and code == ADD then
      b.m[member] = ts
      b.n = b.n + 1
      b.w = w
      applied = true
      tat = math.max(tat, ts + w)
    elseif store and ts ~= 0 then
      tat = math.max(tat, ts + w)
    end
  elseif code == REMOVE then
    local b = countBucket(ki)
    local w = p1
    prune(b, w)
    local present = b.m[member] ~= nil
    if present then
      b.m[member] = nil
      b.n = b.n - 1
      b.w = w
    end
    allowed, applied = true, present
    remaining = math.max(p2 - b.n, 0)
    tat = countReset(b, w)
  else
    return redis.error_reply('ERR weir ratelimit: unknown op code ' .. tostring(code))
  end

  if not allowed then
    committed = false
  end
  if applied then
    dirty[ki] = true
  end
  local n = #out
  out[n + 1] = bit(allowed)
  out[n + 2] = bit(applied)
  out[n + 3] = bit(never)
  out[n + 4] = remaining
  out[n + 5] = retry
  out[n + 6] = math.max(tat, now)
end

if ARGV[a] == '1' and redis.call('EXISTS', KEYS[#KEYS]) == 0 then
  return redis.error_reply('WEIRLOST the epoch marker is missing: the limiter state was lost')
end

if not committed then
  out[2] = 0
  for o = 0, nops - 1 do
    out[3 + o * 6 + 1] = 0
  end
  return out
end

-- expireArgs returns the expiry option that makes a key vanish just after
-- the instant t (microseconds): PXAT on Redis's own clock, the first whole
-- millisecond after t. Under a test clock (ARGV[1] set), which does not run
-- at the speed of Redis's, it is PX relative to the test's now plus an hour:
-- a key that outlives its state is harmless (the script ignores a past TAT
-- and members that no longer count), but one that vanished before the test
-- clock reached t would lose state.
local function expireArgs(t)
  if fake then
    return 'PX', int(idiv(t - now, 1000) + 1 + 3600000)
  end
  return 'PXAT', int(idiv(t, 1000) + 1)
end

-- Store every bucket that an applied op changed; an idle one is deleted.
for i in pairs(dirty) do
  local r, s = rates[i], sets[i]
  if r ~= nil then
    if r.tat <= now then
      redis.call('DEL', KEYS[i])
    else
      local opt, ms = expireArgs(r.tat)
      redis.call('SET', KEYS[i], int(r.tat), opt, ms)
    end
  elseif s ~= nil then
    if s.n == 0 then
      redis.call('DEL', KEYS[i])
    else
      -- One ZREM and one ZADD, in chunks that unpack can take.
      local gone, added = {}, {}
      for member in pairs(s.orig) do
        if s.m[member] == nil then
          gone[#gone + 1] = member
        end
      end
      for member, ts in pairs(s.m) do
        if s.orig[member] ~= ts then
          added[#added + 1] = int(ts)
          added[#added + 1] = member
        end
      end
      for j = 1, #gone, 1000 do
        redis.call('ZREM', KEYS[i], unpack(gone, j, math.min(j + 999, #gone)))
      end
      for j = 1, #added, 1000 do
        redis.call('ZADD', KEYS[i], unpack(added, j, math.min(j + 999, #added)))
      end
      local last = math.max(countReset(s, s.w), now + 1)
      local opt, ms = expireArgs(last)
      if opt == 'PX' then
        redis.call('PEXPIRE', KEYS[i], ms)
      else
        redis.call('PEXPIREAT', KEYS[i], ms)
      end
    end
  end
end
return out
