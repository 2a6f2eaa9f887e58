--[[
  claim-due: leases up to `limit` due PENDING tasks of one partition, earliest due first.

  KEYS[1] due      zset   PENDING task ids by nextAttemptAt
  KEYS[2] leases   zset   IN_FLIGHT task ids by leaseExpiresAt
  KEYS[3] counts   hash   status -> number of tasks

  ARGV[1] base         the partition's key prefix, `{prefix:partition}:`
  ARGV[2] now          epoch ms (the engine's clock, never Redis TIME)
  ARGV[3] limit        most tasks to claim
  ARGV[4] owner        worker id
  ARGV[5] leaseUntil   now + leaseMs, computed by the caller

  Each claimed task becomes IN_FLIGHT with owner and leaseUntil, a raised token and version, and
  updated = now; its due time is left as it was. Reads the due index from its start and stops after
  `limit` entries: no scan.

  Returns { state, data } per claimed task, earliest due first.
  Errors: none.
]]
--- @include "task-state"

local base, now, owner, lease_until = ARGV[1], ARGV[2], ARGV[4], ARGV[5]
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local claimed = {}
for _, id in ipairs(ids) do
  local key = base .. 'task:' .. id
  local state = redis.call('HMGET', key, 'status', 'token', 'version', 'sortKey', 'policyId')
  if state[1] ~= 'PENDING' then
    -- The due index holds PENDING tasks only; drop a stray entry rather than hand out a task twice.
    index_remove(KEYS[1], id)
  else
    redis.call('HSET', key, 'status', 'IN_FLIGHT', 'owner', owner, 'leaseUntil', lease_until, 'updated', now,
      'token', format_int(tonumber(state[2]) + 1), 'version', format_int(tonumber(state[3]) + 1))
    reindex(base, KEYS[1], KEYS[2], id, 'PENDING', 'IN_FLIGHT', nil, lease_until, state[4], state[5] or nil)
    claimed[#claimed + 1] = read_task(base, id)
  end
end
flush_indexes(KEYS[3])
return claimed
