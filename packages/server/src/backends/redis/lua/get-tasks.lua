--[[
  get-tasks: reads tasks of one partition by id or by idempotency key, each state and data together.

  KEYS[1] idem   hash   idempotency key -> task id

  ARGV[1] base   the partition's key prefix, `{prefix:partition}:`
  ARGV[2] by     'id' or 'key': what ARGV[3..] are
  ARGV[3..]      task ids or idempotency keys

  Returns one entry per id or key, in order: { state JSON, data }, or false when there is no such task.
  Errors: none. Writes nothing.
]]
--- @include "task-state"

local base = ARGV[1]
local tasks = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  if ARGV[2] == 'key' then id = redis.call('HGET', KEYS[1], ARGV[i]) end
  local task = id and read_task(base, id)
  tasks[i - 2] = task and task_reply(task) or false
end
return tasks
