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
  ARGV[4] states   JSON array, one array per task (task-codec.ts encodeTaskState): the values of TASK_FIELDS
                   in order (a string, or false for null: the field is absent; `sortKey` the 16 time digits of
                   the listing key, which the id completes), then the task id and the idempotency key
  ARGV[4 + t]      data JSON of the t-th task (stored as it is)

  A PENDING task joins its target's queue (`due:<target>`); an IN_FLIGHT one (the hand-off: already leased
  to the local engine) joins the lease index, counts in its target's in-flight count, and is never claimed; a
  finished one with an `expires` (its retention's end) joins `expiring` at that time.

  Returns one entry per task, in order: 1 when inserted, or { state JSON, data } of the task that already holds
  its idempotency key (stored earlier, or earlier in this batch) when it is a duplicate.
  Publishes one wake-up when any inserted task is PENDING.

  Errors (nothing written): `TASK_EXISTS <id>` when a task id is taken by a task with another key.
]]
--- @include "task-state"

-- Where a state array holds the task id and the idempotency key, after the values of TASK_FIELDS.
local ID, KEY = #TASK_FIELDS + 1, #TASK_FIELDS + 2

local base = ARGV[1]
local states = cjson.decode(ARGV[4])
local n = #states

-- Check first, with one HMGET for every key: which tasks are duplicates (a key stored before, or earlier in
-- this batch), and that no new task reuses an existing task id.
local idem_keys = {}
for t = 1, n do idem_keys[t] = states[t][KEY] end
local holders = {}
for i = 1, n, CHUNK do
  local found = redis.call('HMGET', KEYS[1], unpack(idem_keys, i, math.min(i + CHUNK - 1, n)))
  for j = 1, #found do holders[i + j - 1] = found[j] end
end
local owner_in_batch, new_task_ids = {}, {}
for t = 1, n do
  local key = idem_keys[t]
  if not holders[t] and not owner_in_batch[key] then
    owner_in_batch[key] = t
    new_task_ids[#new_task_ids + 1] = states[t][ID]
  end
end
-- One HMGET over the new tasks' ids in the records' hash: the ids already taken.
local taken = {}
for i = 1, #new_task_ids, CHUNK do
  local found = redis.call('HMGET', tasks_key(base), unpack(new_task_ids, i, math.min(i + CHUNK - 1, #new_task_ids)))
  for j = 1, #found do
    if found[j] then taken[new_task_ids[i + j - 1]] = true end
  end
end
local new_ids = {}
for t = 1, n do
  if owner_in_batch[idem_keys[t]] == t then
    local id = states[t][ID]
    if new_ids[id] or taken[id] then
      return redis.error_reply('TASK_EXISTS ' .. id)
    end
    new_ids[id] = true
  end
end

local results, wake, idem_entries, records, data_entries, seen_targets = {}, false, {}, {}, {}, {}
for t = 1, n do
  local state = states[t]
  local id, key = state[ID], idem_keys[t]
  if holders[t] or owner_in_batch[key] ~= t then
    -- Read after the batch is written: the holder may be a task of this very batch.
    results[t] = holders[t] or states[owner_in_batch[key]][ID]
  else
    records[#records + 1] = id
    records[#records + 1] = pack_state(state)
    -- Stored short; the status set holds the whole listing key.
    state[FIELD.sortKey] = listing_key(state, id)
    data_entries[#data_entries + 1] = id
    data_entries[#data_entries + 1] = ARGV[4 + t]
    idem_entries[#idem_entries + 1] = key
    idem_entries[#idem_entries + 1] = id
    local status, target = state[FIELD.status], state[FIELD.target]
    reindex(base, KEYS[2], id, state, nil, status, state[FIELD.due], state[FIELD.leaseUntil])
    index_expiry(base, id, state)
    if not seen_targets[target] then
      seen_targets[target] = true
      index_add(KEYS[5], 0, target)
    end
    if status == 'PENDING' then wake = true end
    results[t] = 1
  end
end
for i = 1, #records, CHUNK do
  redis.call('HSET', tasks_key(base), unpack(records, i, math.min(i + CHUNK - 1, #records)))
end
for i = 1, #data_entries, CHUNK do
  redis.call('HSET', data_key(base), unpack(data_entries, i, math.min(i + CHUNK - 1, #data_entries)))
end
for i = 1, #idem_entries, CHUNK do
  redis.call('HSET', KEYS[1], unpack(idem_entries, i, math.min(i + CHUNK - 1, #idem_entries)))
end
flush_indexes(base, KEYS[3], KEYS[4], nil)
for t = 1, n do
  if results[t] ~= 1 then results[t] = task_reply(read_task(base, results[t])) end
end

if wake then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
return results
