--[[
  migrate-tasks: brings tasks of one partition from layout 1 (one `due` set for the partition, no target in
  the state hash) to layout 2 (a queue per target). Safe to run again on tasks already migrated.

  KEYS[1] legacy   zset   layout 1's PENDING task ids by nextAttemptAt (entries are removed as tasks move)
  KEYS[2] counts   hash   status -> number of tasks (unchanged)
  KEYS[3] ready    zset   targets with PENDING tasks, by when their queue is next claimable
  KEYS[4] targets  zset   every target ever seen, all scored 0

  ARGV[1] base     the partition's key prefix, `{prefix:partition}:`
  ARGV[2..]        pairs of task id, target key (computed by the caller from the task's URL)

  Each existing task gets its `target` field; a PENDING one joins its target's queue at its due time; the
  target is recorded. Returns how many tasks were migrated. Errors: none.
]]
--- @include "task-state"

local base = ARGV[1]
local migrated, seen_targets = 0, {}
for i = 2, #ARGV - 1, 2 do
  local id, target = ARGV[i], ARGV[i + 1]
  local key = base .. 'task:' .. id
  local status, due = unpack(redis.call('HMGET', key, 'status', 'due'))
  if status then
    redis.call('HSET', key, 'target', target)
    if status == 'PENDING' and due then enqueue(base, target, id, due) end
    if not seen_targets[target] then
      seen_targets[target] = true
      index_add(KEYS[4], 0, target)
    end
    index_remove(KEYS[1], id)
    migrated = migrated + 1
  end
end
flush_indexes(base, KEYS[2], KEYS[3], nil)
return migrated
