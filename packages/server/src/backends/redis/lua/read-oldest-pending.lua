--[[
  read-oldest-pending: one page of a partition's live tasks, oldest first, with the target of each PENDING one, for
  `AdminReads.oldestPending` (store/oldest-pending.ts walks the pages and keeps each target's first). Writes nothing.

  KEYS[1] live     zset   listing keys of the PENDING and IN_FLIGHT tasks (all scores 0: by createdAt, then id)
  KEYS[2] tasks    hash   task id -> record

  ARGV[1] from     BYLEX bound to start at: '-' for the oldest, '(' .. the last listing key of the previous page
  ARGV[2] count    most listing keys to read

  Returns { listing keys read, the last one read (false: none), then target, listing key for the first PENDING
  task of each target met in the page, oldest first }. A task waiting on a retry scheduled far ahead is PENDING.
  Costs one range of `live` and one record read per listing key read, never the rest of the backlog.
  Errors: none.
]]
--- @include "task-state"

local keys = redis.call('ZRANGE', KEYS[1], ARGV[1], '+', 'BYLEX', 'LIMIT', 0, tonumber(ARGV[2]))
local reply = { #keys, keys[#keys] or false }
local seen = {}
for _, key in ipairs(keys) do
  local id = string.sub(key, 17)
  local state = unpack_state(redis.call('HGET', KEYS[2], id), id)
  local target = state[FIELD.target]
  if state[FIELD.status] == 'PENDING' and target and not seen[target] then
    seen[target] = true
    reply[#reply + 1] = target
    reply[#reply + 1] = key
  end
end
return reply
