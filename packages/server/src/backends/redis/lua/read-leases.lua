--[[
  read-leases: IN_FLIGHT tasks of one partition whose lease lapsed at or before `now`, earliest first.

  KEYS[1] leases   zset   IN_FLIGHT task ids by leaseExpiresAt

  ARGV[1] base    the partition's key prefix, `{prefix:partition}:`
  ARGV[2] now     epoch ms
  ARGV[3] limit   most tasks to return

  Returns { state JSON, data } per task, by lease expiry. Reads the lease index from its start and stops after
  `limit` entries. Errors: none. Writes nothing (the lease reaper completes them through complete-attempts).
]]
--- @include "task-state"

local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local tasks = {}
for _, id in ipairs(ids) do
  local task = read_task(ARGV[1], id)
  if task then tasks[#tasks + 1] = task_reply(task) end
end
return tasks
