-- Keeps one result within the store's bound, atomically.
-- KEYS: index (zset id -> expiry ms), sizes (hash id -> bytes), bytes (total),
--       the result's hash, its tombstone.
-- ARGV: id, size, maxBytes, ttl ms, tombstone ttl ms, prefix, mime, pages...
-- Returns 1 when kept, 0 when there is no room.
local index, sizes, total = KEYS[1], KEYS[2], KEYS[3]
local id, size, maxBytes = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local ttl, tombTTL, prefix = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- free drops a result's data and its share of the bound; evict drops its
-- tombstone too, so that a read says "unknown", not "expired".
local function free(old, evict)
  local s = tonumber(redis.call('HGET', sizes, old) or '0')
  redis.call('HDEL', sizes, old)
  redis.call('ZREM', index, old)
  redis.call('DEL', prefix .. 'r:' .. old)
  if evict then redis.call('DEL', prefix .. 't:' .. old) end
  redis.call('DECRBY', total, s)
end

-- Expired results free their bytes first (their tombstones stay), then the
-- oldest go until the new one fits. Each pass removes one entry.
for _, old in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', now)) do
  free(old, false)
end
if redis.call('HEXISTS', sizes, id) == 1 then free(id, true) end
local bytes = tonumber(redis.call('GET', total) or '0')
while bytes + size > maxBytes do
  local oldest = redis.call('ZRANGE', index, 0, 0)
  if #oldest == 0 then break end
  free(oldest[1], true)
  bytes = tonumber(redis.call('GET', total) or '0')
end
if bytes < 0 or #redis.call('ZRANGE', index, 0, 0) == 0 then
  -- Bookkeeping lost (a flush of some keys): start again from nothing.
  redis.call('SET', total, 0)
  bytes = 0
end
if bytes + size > maxBytes then return 0 end

local result = KEYS[4]
redis.call('DEL', result)
redis.call('HSET', result, 'mime', ARGV[7], 'n', #ARGV - 7)
for i = 8, #ARGV do -- one page at a time: unpack would overflow Lua's stack
  redis.call('HSET', result, tostring(i - 8), ARGV[i])
end
redis.call('PEXPIRE', result, ttl)
redis.call('SET', KEYS[5], now + ttl, 'PX', tombTTL)
redis.call('ZADD', index, now + ttl, id)
redis.call('HSET', sizes, id, size)
redis.call('INCRBY', total, size)
return 1
