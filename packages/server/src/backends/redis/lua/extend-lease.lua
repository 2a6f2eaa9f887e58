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
--- @include "task-state"

local base, id = ARGV[1], ARGV[2]
local state = read_state(base, id)
if state[FIELD.status] ~= 'IN_FLIGHT' or tonumber(state[FIELD.token]) ~= tonumber(ARGV[3]) then return 0 end
state[FIELD.leaseUntil] = ARGV[4]
state[FIELD.version] = format_int(tonumber(state[FIELD.version]) + 1)
write_state(base, id, state)
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
return 1
