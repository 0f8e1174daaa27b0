-- SPDX-License-Identifier: Apache-2.0

-- restore.lua: put back exact counts that Redis lost, from weir's store
-- (RateLimitSource.Restore), one chunk of buckets per call.
--
-- KEYS[1]: the epoch marker; KEYS[2]: the restore lock; KEYS[3..]: buckets.
-- ARGV[1]: the lock's token; ARGV[2]: "1" on the last chunk, which sets the
--          marker and releases the lock;
-- then per bucket: window (µs), number of members n, then n pairs of
--          member and timestamp (µs).
--
-- A chunk fails with WEIRLOCK unless the caller still holds the lock: a
-- Redis that restarted again in the middle lost the earlier chunks, and the
-- marker must not claim them. Members are added with NX and only while
-- they count; a bucket's expiry is only ever moved later.

if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return redis.error_reply('WEIRLOCK the restore lock is not held by this restore')
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local a = 3
for i = 3, #KEYS do
  local w, n = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  a = a + 2
  local add, last = {}, 0
  for _ = 1, n do
    local ts = tonumber(ARGV[a + 1])
    if ts > now - w then
      add[#add + 1] = ARGV[a + 1]
      add[#add + 1] = ARGV[a]
      last = math.max(last, ts + w)
    end
    a = a + 2
  end
  for j = 1, #add, 1000 do
    redis.call('ZADD', KEYS[i], 'NX', unpack(add, j, math.min(j + 999, #add)))
  end
  if #add > 0 then
    local at = math.floor(last / 1000) + 1
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl > 0 then
      at = math.max(at, math.floor(now / 1000) + ttl)
    end
    redis.call('PEXPIREAT', KEYS[i], string.format('%.0f', at))
  end
end
if ARGV[2] == '1' then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('DEL', KEYS[2])
end
return {1}
