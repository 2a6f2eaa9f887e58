--[[
  extend-lease: pushes a held lease to a new expiry if the fencing token still holds it.

  KEYS[1] leases   zset   IN_FLIGHT task ids by leaseExpiresAt

  ARGV[1] base         the partition's key prefix, `{prefix:partition}:`
  ARGV[2] id           task id
  ARGV[3] token        the fencing token the lease was claimed with
  ARGV[4] leaseUntil   the new expiry, epoch ms

  Returns 1 when extended (leaseUntil set, version raised), 0 when the task is not IN_FLIGHT with that token.
  Errors: none.
]]

local key = ARGV[1] .. 'task:' .. ARGV[2]
local status, token = unpack(redis.call('HMGET', key, 'status', 'token'))
if status ~= 'IN_FLIGHT' or tonumber(token) ~= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', key, 'leaseUntil', ARGV[4])
redis.call('HINCRBY', key, 'version', 1)
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
return 1
