--[[
  update-task: the API's optimistic change (cancel, cancel-requested, replay) at an expected version.

  KEYS[1] due      zset   PENDING task ids by nextAttemptAt
  KEYS[2] leases   zset   IN_FLIGHT task ids by leaseExpiresAt
  KEYS[3] counts   hash   status -> number of tasks

  ARGV[1] base      the partition's key prefix, `{prefix:partition}:`
  ARGV[2] id        task id
  ARGV[3] version   the version the caller read
  ARGV[4] channel   pub/sub channel of due wake-ups
  ARGV[5] message   wake-up message (`<instance id> <partition>`)
  ARGV[6..]         pairs of state field, encoded value ('' = null, '=' .. value): the patch

  At the expected version, applies the patch and raises the version; a task that leaves IN_FLIGHT loses its
  lease (which also fences out its holder); a PENDING task is re-indexed at its (new) due time.

  Returns { 'updated', { state, data } }, { 'conflict', { state, data } } (another version), or
  { 'not_found' }. Publishes a wake-up when the task ends up PENDING with a new status or due time.

  Errors (nothing written): `INVALID_PATCH <reason>` when the patch would leave a PENDING task without a
  due time or make a task IN_FLIGHT without a lease.
]]
--- @include "task-state"

local base, id = ARGV[1], ARGV[2]
local key = base .. 'task:' .. id
local state = redis.call('HMGET', key, 'status', 'due', 'leaseUntil', 'version', 'sortKey', 'policyId')
if not state[1] then return { 'not_found' } end
if tonumber(state[4]) ~= tonumber(ARGV[3]) then return { 'conflict', read_task(base, id) } end

local old, due, due_changed = state[1], state[2] or nil, false
local new = old
for i = 6, #ARGV - 1, 2 do
  if ARGV[i] == 'status' then new = decode_value(ARGV[i + 1]) end
  if ARGV[i] == 'due' then
    due = decode_value(ARGV[i + 1])
    due_changed = true
  end
end
if new == 'PENDING' and due == nil then return redis.error_reply('INVALID_PATCH a PENDING task needs nextAttemptAt') end
if new == 'IN_FLIGHT' and old ~= 'IN_FLIGHT' then
  return redis.error_reply('INVALID_PATCH only a claim makes a task IN_FLIGHT')
end

local set, del = { 'version', format_int(tonumber(state[4]) + 1) }, {}
if old == 'IN_FLIGHT' and new ~= 'IN_FLIGHT' then del = { 'owner', 'leaseUntil' } end
for i = 6, #ARGV - 1, 2 do
  local value = decode_value(ARGV[i + 1])
  if value == nil then
    del[#del + 1] = ARGV[i]
  else
    set[#set + 1] = ARGV[i]
    set[#set + 1] = value
  end
end
redis.call('HSET', key, unpack(set))
if #del > 0 then redis.call('HDEL', key, unpack(del)) end
reindex(base, KEYS[1], KEYS[2], id, old, new, due, state[3], state[5], state[6] or nil)
flush_indexes(KEYS[3])
if new == 'PENDING' and (old ~= 'PENDING' or due_changed) then redis.call('PUBLISH', ARGV[4], ARGV[5]) end
return { 'updated', read_task(base, id) }
