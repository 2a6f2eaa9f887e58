--[[
  cancel-task: cancels a task at once, if its status allows it (a PENDING task: see the port's cancelTask).

  KEYS[1] leases   zset   IN_FLIGHT task ids by leaseExpiresAt
  KEYS[2] counts   hash   status -> number of tasks
  KEYS[3] ready    zset   targets with PENDING tasks, by when their queue is next claimable

  ARGV[1] base     the partition's key prefix, `{prefix:partition}:`
  ARGV[2] id       task id
  ARGV[3] now      epoch ms: the new `updated`
  ARGV[4] expires  epoch ms: when the cancelled task's retention ends (its `expires`)
  ARGV[5..]        pairs of from-status, to-status: the moves core's lifecycle allows (the guard)

  In a from-status, the task takes its to-status, loses its due time (and its queue place), its lease if it
  had one, and its version is raised; it takes `expires` and joins `expiring` at that time, and, when it has a
  callback, `callbacks` at `now` (its callback is owed).

  Returns { 'applied', { state JSON, data } } (the task after the change), { 'refused', { state JSON, data } } (another
  status: nothing written), or { 'not_found' }.
  Errors: none.
]]
--- @include "task-state"

local base, id, now = ARGV[1], ARGV[2], ARGV[3]
local task = read_task(base, id)
if not task then return { 'not_found' } end
local state = task[1]
local old = state[FIELD.status]
local new = allowed_move(old, 5)
if not new then return { 'refused', task_reply(task) } end

reindex(base, KEYS[1], id, state, old, new, nil, nil)
state[FIELD.status], state[FIELD.updated] = new, now
state[FIELD.version] = format_int(tonumber(state[FIELD.version]) + 1)
state[FIELD.due], state[FIELD.owner], state[FIELD.leaseUntil] = false, false, false
state[FIELD.expires] = ARGV[4]
write_state(base, id, state)
index_expiry(base, id, state)
owe_callback(base, id, state, now)
flush_indexes(base, KEYS[2], KEYS[3], nil)
return { 'applied', task_reply(task) }
