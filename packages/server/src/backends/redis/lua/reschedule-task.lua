--[[
  reschedule-task: makes a PENDING task due at another time (run it now, or later), at the version the caller
  decided it on.

  KEYS[1] leases   zset   IN_FLIGHT task ids by leaseExpiresAt (untouched: a PENDING task holds no lease)
  KEYS[2] counts   hash   status -> number of tasks (untouched: the status stays)
  KEYS[3] ready    zset   targets with PENDING tasks, by when their queue is next claimable

  ARGV[1] base        the partition's key prefix, `{prefix:partition}:`
  ARGV[2] id          task id
  ARGV[3] version     the version the caller read
  ARGV[4] due         the new due time (epoch ms)
  ARGV[5] updated     epoch ms
  ARGV[6] channel     pub/sub channel of due wake-ups
  ARGV[7] message     wake-up message (`<instance id> <partition>`)
  ARGV[8..]           pairs of from-status, to-status: the moves core's lifecycle allows (PENDING to PENDING): the
                      guard

  At the expected version and in a from-status, the task takes its to-status due at `due`: its place in its target's
  queue moves (earlier or later), and the target is rescored in `ready` (its gate still applies: a held or limited
  target stays where its gate puts it). The attempt count, the run and its budget stay. The version is raised.

  Returns { 'applied', { state JSON, data } }, { 'refused', { state JSON, data } } (another version or status: nothing
  written), or { 'not_found' }. Publishes a wake-up when applied, so other instances aim their timers at the new time.
  Errors: none.
]]
--- @include "task-state"

local base, id = ARGV[1], ARGV[2]
local task, new, refusal = guarded_move(base, id, 8, ARGV[3])
if refusal then return refusal end
local state = task[1]
local old = state[FIELD.status]

local due = ARGV[4]
reindex(base, KEYS[1], id, state, old, new, due, nil)
state[FIELD.status], state[FIELD.due], state[FIELD.updated] = new, due, ARGV[5]
state[FIELD.version] = format_int(tonumber(state[FIELD.version]) + 1)
write_state(base, id, state)
flush_indexes(base, KEYS[2], KEYS[3], nil)
redis.call('PUBLISH', ARGV[6], ARGV[7])
return { 'applied', task_reply(task) }
