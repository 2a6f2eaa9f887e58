--[[
  request-cancel: marks a task whose attempt is in flight to be cancelled when that attempt ends.

  KEYS[1] tasks    hash   task id -> the task's record (`tasks`)

  ARGV[1] base     the partition's key prefix, `{prefix:partition}:`
  ARGV[2] id       task id
  ARGV[3] now      epoch ms: the new `updated`
  ARGV[4..]        the statuses the request may be made in (IN_FLIGHT, from core's lifecycle): the guard

  In one of those statuses, sets `cancel`, `updated` and raises the version; the status, lease and token stay,
  so the holder's completion still applies (and then takes its cancel branch).

  Returns { 'applied', { state JSON, data } }, { 'refused', { state JSON, data } } (another status: nothing written), or
  { 'not_found' }.
  Errors: none.
]]
--- @include "task-state"

local base, id, now = ARGV[1], ARGV[2], ARGV[3]
local task = read_task(base, id)
if not task then return { 'not_found' } end
local state = task[1]
local allowed = false
for i = 4, #ARGV do
  if ARGV[i] == state[FIELD.status] then allowed = true end
end
if not allowed then return { 'refused', task_reply(task) } end

state[FIELD.cancel], state[FIELD.updated] = '1', now
state[FIELD.version] = format_int(tonumber(state[FIELD.version]) + 1)
write_state(base, id, state)
return { 'applied', task_reply(task) }
