-- Helpers shared by the task scripts (spliced in at load time by scripts.ts where a script says
-- `--- @include "task-state"`).
--
-- A task is two keys under the partition's base `{prefix:partition}:`: the hash `task:<id>` (its changing
-- state: status, attempt, runOffset, runStart, lastDelay, due, updated, owner, leaseUntil, token, version,
-- cancel, error, httpStatus, deadReason, policyId, sortKey; an absent field is null) and the string
-- `data:<id>` (its fixed part as JSON, which no script parses).
--
-- Numbers: every time arrives as text written by JavaScript and is stored as that text. Scripts compare
-- numbers with tonumber (exact) but never format a time (tostring keeps 14 digits and would round
-- 1700000000000.375); only the integer counters token and version are raised here (format_int).
--
-- A script's writes are not rolled back when it fails part-way: each script checks everything that can
-- refuse the call before its first write.

-- Every field of the state hash, in the order insert-tasks takes them and read_task returns them
-- (task-codec.ts STATE_FIELDS must match).
local TASK_FIELDS = { 'status', 'attempt', 'runOffset', 'runStart', 'lastDelay', 'due', 'updated', 'owner',
  'leaseUntil', 'token', 'version', 'cancel', 'error', 'httpStatus', 'deadReason', 'policyId', 'sortKey' }

-- Decodes one argument value: '' is null, anything else is '=' followed by the value.
local function decode_value(v)
  if v == '' then return nil end
  return string.sub(v, 2)
end

local function format_int(n)
  return string.format('%d', n)
end

-- Index changes of a whole batch, buffered and written by flush_indexes with one variadic command per key:
-- a batch of n tasks then costs a few commands per index instead of a few per task. No batch removes and
-- adds the same member of one key, so the order of the flush does not matter.
local index_removals, index_additions, count_deltas = {}, {}, {}

local function index_remove(key, member)
  local members = index_removals[key]
  if not members then
    members = {}
    index_removals[key] = members
  end
  members[#members + 1] = member
end

local function index_add(key, score, member)
  local entries = index_additions[key]
  if not entries then
    entries = {}
    index_additions[key] = entries
  end
  entries[#entries + 1] = score
  entries[#entries + 1] = member
end

-- Arguments per command: even (ZADD takes pairs) and well under the C stack limit of unpack.
local CHUNK = 1000

local function flush_indexes(counts_key)
  for key, members in pairs(index_removals) do
    for i = 1, #members, CHUNK do redis.call('ZREM', key, unpack(members, i, math.min(i + CHUNK - 1, #members))) end
  end
  for key, entries in pairs(index_additions) do
    for i = 1, #entries, CHUNK do redis.call('ZADD', key, unpack(entries, i, math.min(i + CHUNK - 1, #entries))) end
  end
  for status, delta in pairs(count_deltas) do
    if delta ~= 0 then redis.call('HINCRBY', counts_key, status, delta) end
  end
end

-- Moves a task's listing key from the sets of status `old` (nil for a new task) to those of `new`, per
-- policy too, and keeps the per-status counts.
local function move_status(base, old, new, sort_key, policy_id)
  if old == new then return end
  if old then
    index_remove(base .. 'status:' .. old, sort_key)
    if policy_id then index_remove(base .. 'ps:' .. old .. ':' .. policy_id, sort_key) end
    count_deltas[old] = (count_deltas[old] or 0) - 1
  end
  index_add(base .. 'status:' .. new, 0, sort_key)
  if policy_id then index_add(base .. 'ps:' .. new .. ':' .. policy_id, 0, sort_key) end
  count_deltas[new] = (count_deltas[new] or 0) + 1
end

-- Puts the task in the index its new status calls for (PENDING: due by `due`; IN_FLIGHT: leases by
-- `lease_until`), takes it out of the one its old status had, and moves its listing key. The caller deletes
-- the lease fields of a task that leaves IN_FLIGHT.
local function reindex(base, due_key, leases_key, id, old, new, due, lease_until, sort_key, policy_id)
  if old == 'PENDING' and new ~= 'PENDING' then index_remove(due_key, id) end
  if new == 'PENDING' then index_add(due_key, due, id) end
  if old == 'IN_FLIGHT' and new ~= 'IN_FLIGHT' then index_remove(leases_key, id) end
  if new == 'IN_FLIGHT' then index_add(leases_key, lease_until, id) end
  move_status(base, old, new, sort_key, policy_id)
end

-- The task as scripts return it: { its state as the values of TASK_FIELDS (nil where absent), its data
-- JSON }, or false when it does not exist. Values only: field names would double the reply.
local function read_task(base, id)
  local data = redis.call('GET', base .. 'data:' .. id)
  if not data then return false end
  return { redis.call('HMGET', base .. 'task:' .. id, unpack(TASK_FIELDS)), data }
end
