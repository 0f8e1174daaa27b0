-- SPDX-License-Identifier: Apache-2.0

-- get.lua: read buckets for ratelimit.Source.Get, writing nothing.
--
-- KEYS:    the bucket keys, already prefixed and hash-tagged.
-- ARGV[1]: the clock in microseconds, or "0" to read Redis TIME.
--
-- Returns a flat array: now, then per key one of
--   0                                 nothing stored
--   1, tat                            a rate bucket
--   2, n, member1, ts1, … member_n, ts_n   a count bucket, as stored

local now = tonumber(ARGV[1])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local out = {now}
for i = 1, #KEYS do
  local kind = redis.call('TYPE', KEYS[i]).ok
  if kind == 'string' then
    out[#out + 1] = 1
    out[#out + 1] = tonumber(redis.call('GET', KEYS[i])) or 0
  elseif kind == 'zset' then
    local raw = redis.call('ZRANGE', KEYS[i], 0, -1, 'WITHSCORES')
    out[#out + 1] = 2
    out[#out + 1] = #raw / 2
    for j = 1, #raw, 2 do
      out[#out + 1] = raw[j]
      out[#out + 1] = tonumber(raw[j + 1])
    end
  elseif kind == 'none' then
    out[#out + 1] = 0
  else
    error({err = 'ERR weir ratelimit: ' .. KEYS[i] .. ' is a ' .. kind .. ', not a bucket'})
  end
end
return out
