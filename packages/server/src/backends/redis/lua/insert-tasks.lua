--[[
  insert-tasks: inserts a batch of new tasks of one partition, idempotently on their idempotency keys.

  KEYS[1] idem      hash   idempotency key -> task id
  KEYS[2] leases    zset   IN_FLIGHT task ids by leaseExpiresAt
  KEYS[3] counts    hash   status -> number of tasks
  KEYS[4] ready     zset   targets with PENDING tasks, by when their queue is next claimable
  KEYS[5] targets   zset   every target ever seen, all scored 0

  ARGV[1] base     the partition's key prefix, `{prefix:partition}:`
  ARGV[2] channel  pub/sub channel of due wake-ups
  ARGV[3] message  wake-up message (`<instance id> <partition>`)
  ARGV[4] n        number of tasks; then per task 3 + #TASK_FIELDS values:
                   task id, idempotency key, data JSON, then each of TASK_FIELDS encoded
                   ('' = null, '=' .. value)

  A PENDING task joins its target's queue (`due:<target>`); an IN_FLIGHT one (the hand-off: already leased
  to the local engine) joins the lease index, counts in its target's in-flight count, and is never claimed.

  Returns one entry per task, in order: 1 when inserted, or { state, data } of the task that already holds
  its idempotency key (stored earlier, or earlier in this batch) when it is a duplicate.
  Publishes one wake-up when any inserted task is PENDING.

  Errors (nothing written): `TASK_EXISTS <id>` when a task id is taken by a task with another key.
]]
--- @include "task-state"

local WIDTH = 3 + #TASK_FIELDS

local base = ARGV[1]
local n = tonumber(ARGV[4])

-- Check first, with one HMGET for every key: which tasks are duplicates (a key stored before, or earlier in
-- this batch), and that no new task reuses an existing task id.
local idem_keys = {}
for t = 0, n - 1 do idem_keys[t + 1] = ARGV[5 + t * WIDTH + 1] end
local holders = {}
for i = 1, n, CHUNK do
  local found = redis.call('HMGET', KEYS[1], unpack(idem_keys, i, math.min(i + CHUNK - 1, n)))
  for j = 1, #found do holders[i + j - 1] = found[j] end
end
local owner_in_batch, new_ids = {}, {}
for t = 0, n - 1 do
  local at = 5 + t * WIDTH
  local id, key = ARGV[at], ARGV[at + 1]
  if not holders[t + 1] and not owner_in_batch[key] then
    if new_ids[id] or redis.call('EXISTS', base .. 'task:' .. id) == 1 then
      return redis.error_reply('TASK_EXISTS ' .. id)
    end
    owner_in_batch[key] = t
    new_ids[id] = true
  end
end

local results, wake, idem_entries, seen_targets = {}, false, {}, {}
for t = 0, n - 1 do
  local at = 5 + t * WIDTH
  local id, key = ARGV[at], ARGV[at + 1]
  if holders[t + 1] or owner_in_batch[key] ~= t then
    -- Read after the batch is written: the holder may be a task of this very batch.
    results[t + 1] = holders[t + 1] or ARGV[5 + owner_in_batch[key] * WIDTH]
  else
    local fields, state = {}, {}
    for f = 1, #TASK_FIELDS do
      local value = decode_value(ARGV[at + 2 + f])
      state[f] = value or false
      if value ~= nil then
        fields[#fields + 1] = TASK_FIELDS[f]
        fields[#fields + 1] = value
      end
    end
    redis.call('HSET', base .. 'task:' .. id, unpack(fields))
    redis.call('SET', base .. 'data:' .. id, ARGV[at + 2])
    idem_entries[#idem_entries + 1] = key
    idem_entries[#idem_entries + 1] = id
    local status, target = state[FIELD.status], state[FIELD.target]
    reindex(base, KEYS[2], id, state, nil, status, state[FIELD.due], state[FIELD.leaseUntil])
    if not seen_targets[target] then
      seen_targets[target] = true
      index_add(KEYS[5], 0, target)
    end
    if status == 'PENDING' then wake = true end
    results[t + 1] = 1
  end
end
for i = 1, #idem_entries, CHUNK do
  redis.call('HSET', KEYS[1], unpack(idem_entries, i, math.min(i + CHUNK - 1, #idem_entries)))
end
flush_indexes(base, KEYS[3], KEYS[4], nil)
for t = 1, n do
  if results[t] ~= 1 then results[t] = read_task(base, results[t]) end
end

if wake then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
return results
