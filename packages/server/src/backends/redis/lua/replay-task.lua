--[[
  replay-task: starts a fresh run of a dead letter, at the version the caller decided it on.

  KEYS[1] leases   zset   IN_FLIGHT task ids by leaseExpiresAt
  KEYS[2] counts   hash   status -> number of tasks
  KEYS[3] ready    zset   targets with PENDING tasks, by when their queue is next claimable

  ARGV[1] base        the partition's key prefix, `{prefix:partition}:`
  ARGV[2] id          task id
  ARGV[3] version     the version the caller read
  ARGV[4] due         the run's first due time (epoch ms)
  ARGV[5] runOffset   attempts made before the run
  ARGV[6] runStart    the run's time origin (the replay's time), encoded ('=' .. value; '' = null)
  ARGV[7] updated     epoch ms
  ARGV[8] channel     pub/sub channel of due wake-ups
  ARGV[9] message     wake-up message (`<instance id> <partition>`)
  ARGV[10..]          pairs of from-status, to-status: the moves core's lifecycle allows (FAILED and EXHAUSTED
                      to PENDING): the guard

  At the expected version and in a from-status, the task takes its to-status due at `due` (in its target's
  queue), with runOffset, runStart, lastDelay 0, no dead-letter reason and no cancel request; the idempotency
  key, the attempt count and the attempt log stay. The version is raised. A live task is never purged: it loses
  its `expires` and leaves `expiring`.

  Returns { 'applied', { state JSON, data } }, { 'refused', { state JSON, data } } (another version or status: nothing
  written), or { 'not_found' }. Publishes a wake-up when applied.
  Errors: none.
]]
--- @include "task-state"

local base, id = ARGV[1], ARGV[2]
local task, new, refusal = guarded_move(base, id, 10, ARGV[3])
if refusal then return refusal end
local state = task[1]
local old = state[FIELD.status]

local due = ARGV[4]
reindex(base, KEYS[1], id, state, old, new, due, nil)
state[FIELD.status], state[FIELD.due], state[FIELD.runOffset], state[FIELD.lastDelay] = new, due, ARGV[5], '0'
state[FIELD.cancel], state[FIELD.updated] = '0', ARGV[7]
state[FIELD.version] = format_int(tonumber(state[FIELD.version]) + 1)
state[FIELD.runStart] = decode_value(ARGV[6]) or false
state[FIELD.deadReason], state[FIELD.owner], state[FIELD.leaseUntil] = false, false, false
state[FIELD.expires] = false
write_state(base, id, state)
index_remove(expiring_key(base), id)
flush_indexes(base, KEYS[2], KEYS[3], nil)
redis.call('PUBLISH', ARGV[8], ARGV[9])
return { 'applied', task_reply(task) }
