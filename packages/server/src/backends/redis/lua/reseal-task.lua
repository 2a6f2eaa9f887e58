--[[
  reseal-task: replaces a task's fixed part (its data JSON) if it is still the one the caller read, and nothing else.

  KEYS[1] data   hash   task id -> the task's fixed part as JSON (`data`)

  ARGV[1] expected   the data JSON as the caller read it (and checked its headers and body)
  ARGV[2] next       the data JSON to write: the same, with the headers and inline body re-sealed
  ARGV[3] id         task id

  A re-seal of a task's secrets under a new encryption key (`retryd keys rotate-encryption`). The task's record
  (status, version, lease, token) and every index are left as they are, so an attempt in flight keeps its lease.
  The JSON is compared as text, never parsed here: the caller builds `next` from `expected`.

  Returns 1 when written; 0 when the data JSON is no longer `expected` (nothing written); -1 when there is no
  such task.
  Errors: none.
]]

local current = redis.call('HGET', KEYS[1], ARGV[3])
if not current then return -1 end
if current ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[2])
return 1
