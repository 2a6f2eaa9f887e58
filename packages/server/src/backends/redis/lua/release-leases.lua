--[[
  release-leases: hands held leases of one partition back at shutdown, without counting an attempt.

  KEYS[1] leases   zset   IN_FLIGHT task ids by leaseExpiresAt
  KEYS[2] counts   hash   status -> number of tasks
  KEYS[3] ready    zset   targets with PENDING tasks, by when their queue is next claimable

  ARGV[1] base     the partition's key prefix, `{prefix:partition}:`
  ARGV[2] now      epoch ms: the released tasks' due time and `updated`
  ARGV[3] channel  pub/sub channel of due wake-ups
  ARGV[4] message  wake-up message (`<instance id> <partition>`)
  ARGV[5..]        pairs of task id, fencing token

  Each task still IN_FLIGHT with its token becomes PENDING, due now, without lease, version raised, back in
  its target's queue, and frees an in-flight slot of its target.
  Returns how many were released; publishes one wake-up when any was. Errors: none.
]]
--- @include "task-state"

local base, now = ARGV[1], ARGV[2]
local released = 0
for i = 5, #ARGV - 1, 2 do
  local id = ARGV[i]
  local state = read_state(base, id)
  if state[FIELD.status] == 'IN_FLIGHT' and tonumber(state[FIELD.token]) == tonumber(ARGV[i + 1]) then
    reindex(base, KEYS[1], id, state, 'IN_FLIGHT', 'PENDING', now, nil)
    state[FIELD.status], state[FIELD.due], state[FIELD.updated] = 'PENDING', now, now
    state[FIELD.version] = format_int(tonumber(state[FIELD.version]) + 1)
    state[FIELD.owner], state[FIELD.leaseUntil] = false, false
    write_state(base, id, state)
    released = released + 1
  end
end
flush_indexes(base, KEYS[2], KEYS[3], nil)
if released > 0 then redis.call('PUBLISH', ARGV[3], ARGV[4]) end
return released
