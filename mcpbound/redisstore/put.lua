-- Keeps one result within its shard's bound, atomically.
-- KEYS: index (zset id -> result expiry ms), tombs (zset id -> tombstone
--       expiry ms), charges (hash id -> the result's charge), bytes (the
--       shard's total charge), the result's hash, its tombstone.
-- ARGV: id, charge of the result, charge of its tombstone, the shard's
--       bound, ttl ms, tombstone ttl ms, key base of the shard, sweep limit,
--       mime, pages...
-- Returns 1 when kept, 0 when there is no room.
local index, tombs, charges, total = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, charge, tombCharge = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local bound, ttl, tombTTL = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local base, limit = ARGV[7], tonumber(ARGV[8])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- dropResult gives back a result's charge and its data; dropTomb its
-- tombstone's (a read then says "unknown", not "expired").
local function dropResult(old)
  local c = tonumber(redis.call('HGET', charges, old) or '0')
  redis.call('HDEL', charges, old)
  redis.call('ZREM', index, old)
  redis.call('DEL', base .. 'r:' .. old)
  redis.call('DECRBY', total, c)
end
local function dropTomb(old)
  if redis.call('ZREM', tombs, old) == 1 then
    redis.call('DEL', base .. 't:' .. old)
    redis.call('DECRBY', total, tombCharge)
  end
end

-- Expired results give back their charge, expired tombstones theirs: at
-- most limit of each per call.
for _, old in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', now, 'LIMIT', 0, limit)) do
  dropResult(old)
end
for _, old in ipairs(redis.call('ZRANGEBYSCORE', tombs, '-inf', now, 'LIMIT', 0, limit)) do
  dropTomb(old)
end
if redis.call('HEXISTS', charges, id) == 1 then dropResult(id) end
dropTomb(id)
local need = charge + tombCharge
local bytes = tonumber(redis.call('GET', total) or '0')
if bytes < 0 or (redis.call('ZCARD', index) == 0 and redis.call('ZCARD', tombs) == 0) then
  -- Bookkeeping lost (evicted, or flushed): start again from nothing.
  redis.call('SET', total, 0)
  bytes = 0
end
-- The oldest results go first, then the oldest tombstones: at most limit.
for _ = 1, limit do
  if bytes + need <= bound then break end
  local oldest = redis.call('ZRANGE', index, 0, 0)
  if #oldest == 1 then
    dropResult(oldest[1])
    dropTomb(oldest[1])
  else
    oldest = redis.call('ZRANGE', tombs, 0, 0)
    if #oldest == 0 then break end
    dropTomb(oldest[1])
  end
  bytes = tonumber(redis.call('GET', total) or '0')
end
if bytes + need > bound then return 0 end

local result = KEYS[5]
redis.call('DEL', result)
redis.call('HSET', result, 'mime', ARGV[9], 'n', #ARGV - 9)
for i = 10, #ARGV do -- one page at a time: unpack would overflow Lua's stack
  redis.call('HSET', result, tostring(i - 10), ARGV[i])
end
redis.call('PEXPIRE', result, ttl)
redis.call('SET', KEYS[6], now + ttl, 'PX', tombTTL)
redis.call('ZADD', index, now + ttl, id)
redis.call('ZADD', tombs, now + tombTTL, id)
redis.call('HSET', charges, id, charge)
redis.call('INCRBY', total, need)
-- No key without a time to live: the bookkeeping lives as long as the
-- last tombstone it counts.
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], tombTTL) end
return 1
