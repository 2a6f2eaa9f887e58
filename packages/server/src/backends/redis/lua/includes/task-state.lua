-- Helpers shared by the task scripts (spliced in at load time by scripts.ts where a script says
-- `--- @include "task-state"`).
--
-- A task is a field named by its id in each of two hashes under the partition's base `{prefix:partition}:`
-- (layout 6): in `tasks`, its record, the values of TASK_FIELDS below (its changing state and what scripts index
-- by) as a MessagePack array, false where a field is null; in `data`, its fixed part as JSON, which no script
-- parses but the purge (for the idempotency key and body reference of a task it deletes). Two fields in two large
-- hashes cost Redis less than a key of its own per task: no key name, object header or main-dictionary entry, and
-- no field names in the record (layout 5 kept a hash and a string per task).
--
-- The PENDING tasks of one target form its queue, the sorted set `due:<target>` (task ids by due time). The
-- sorted set `ready` holds one member per target whose queue is not empty, scored by when the queue is next
-- claimable: max(its earliest due time, its hold, its rate limit's next token), and absent while the target is
-- at its in-flight limit (the gate: target-gate, spliced in below). Every script that changes a queue marks its
-- target (enqueue / dequeue do it), every move in or out of IN_FLIGHT counts in its target's `inFlight`, and
-- flush_indexes writes the counts and rescores the marked targets once, so `ready` is exact when a script
-- ends: a claim finds claimable queues by range on it and never reads a held or throttled target's queue.
--
-- A finished task whose record has `expires` (when its retention ends) is in the sorted set `expiring` at that
-- time: added by the script that ends it (index_expiry) or inserts it ended, taken out by a replay and by the
-- purge (purge-expired), which finds the tasks to delete by range on it and never walks the tasks.
--
-- Numbers: every time arrives as text written by JavaScript and is stored as that text. Scripts compare
-- numbers with tonumber (exact) but never format a time with tostring (it keeps 14 digits and would round
-- 1700000000000.375); a score read back from Redis is its shortest exact form. The integer counters token and
-- version are raised here (format_int); the gate's computed numbers are written with format_num (target-gate).
--
-- A script's writes are not rolled back when it fails part-way: each script checks everything that can
-- refuse the call before its first write.

-- Every field of a task's record, in the order the record holds them, insert-tasks takes them and read_task
-- returns them: the record's fields of domain/task-fields.ts in row order, the store's own `sortKey` after those
-- layout 6 wrote, and the fields added since after it (`expires`: records are read by position, and one written
-- before a field existed ends early; see unpack_state) (task-codec.ts STATE_FIELDS; test/redis-lua-fields.test.ts
-- fails when the two differ).
local TASK_FIELDS = { 'target', 'policyId', 'status', 'attempt', 'runOffset', 'runStart', 'lastDelay', 'due',
  'updated', 'owner', 'leaseUntil', 'token', 'version', 'cancel', 'error', 'httpStatus', 'deadReason', 'sortKey',
  'expires', 'callback' }

-- The position of each field in TASK_FIELDS (and in read_task's state), by name: FIELD.status, FIELD.due, ...
-- Spelt out rather than built by a loop: every script runs this prelude on every call, and a table built one
-- key at a time is rehashed at every power of two on the way to 19 keys (about 1.3 us a call, measured on
-- Redis 7.0); a constructor sizes it once. test/redis-lua-fields.test.ts checks it against TASK_FIELDS.
local FIELD = { target = 1, policyId = 2, status = 3, attempt = 4, runOffset = 5, runStart = 6, lastDelay = 7,
  due = 8, updated = 9, owner = 10, leaseUntil = 11, token = 12, version = 13, cancel = 14, error = 15,
  httpStatus = 16, deadReason = 17, sortKey = 18, expires = 19, callback = 20 }

-- Decodes one argument value: '' is null, anything else is '=' followed by the value.
local function decode_value(v)
  if v == '' then return nil end
  return string.sub(v, 2)
end

local function format_int(n)
  return string.format('%d', n)
end

--- @include "target-gate"

-- Index changes of a whole batch, buffered and written by flush_indexes with one variadic command per key:
-- a batch of n tasks then costs a few commands per index instead of a few per task. No batch removes and
-- adds the same member of one key, so the order of the flush does not matter.
local index_removals, index_additions, count_deltas = {}, {}, {}
-- Targets whose queue changed (rescored in `ready` by flush_indexes), in first-touched order.
local touched, touched_order = {}, {}
-- Changes of each target's in-flight count (written by flush_indexes), in first-changed order.
local in_flight_deltas, in_flight_order = {}, {}

local function touch_target(target)
  if not touched[target] then
    touched[target] = true
    touched_order[#touched_order + 1] = target
  end
end

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

local function queue_key(base, target)
  return base .. 'due:' .. target
end

-- Adds a task to its target's queue at `due`, or takes it out.
local function enqueue(base, target, id, due)
  index_add(queue_key(base, target), due, id)
  touch_target(target)
end

local function dequeue(base, target, id)
  index_remove(queue_key(base, target), id)
  touch_target(target)
end

-- Arguments per command: even (ZADD takes pairs) and well under the C stack limit of unpack.
local CHUNK = 1000

-- Counts a task of `target` into (1) or out of (-1) IN_FLIGHT.
local function count_in_flight(target, delta)
  if not in_flight_deltas[target] then
    in_flight_deltas[target] = 0
    in_flight_order[#in_flight_order + 1] = target
  end
  in_flight_deltas[target] = in_flight_deltas[target] + delta
end

-- Rescores a target in `ready`: absent when its queue is empty or it is at its in-flight limit, else
-- max(earliest due, hold, next token) (gate_score). Returns the score written (text), or nil.
local function rescore_target(base, ready_key, target)
  local head = redis.call('ZRANGE', queue_key(base, target), 0, 0, 'WITHSCORES')
  local score = head[2] and gate_score(read_gate(base, target), head[2])
  if not score then
    redis.call('ZREM', ready_key, target)
    return nil
  end
  redis.call('ZADD', ready_key, score, target)
  return score
end

-- Writes the buffered index changes, status counts and in-flight counts, then rescores every touched target
-- once (and every target with an in-flight limit whose count changed). Returns true when a target had a slot
-- freed and is claimable by `now` (text; nil: never): the caller's cue to publish a wake-up.
local function flush_indexes(base, counts_key, ready_key, now)
  for key, members in pairs(index_removals) do
    for i = 1, #members, CHUNK do redis.call('ZREM', key, unpack(members, i, math.min(i + CHUNK - 1, #members))) end
  end
  for key, entries in pairs(index_additions) do
    for i = 1, #entries, CHUNK do redis.call('ZADD', key, unpack(entries, i, math.min(i + CHUNK - 1, #entries))) end
  end
  for status, delta in pairs(count_deltas) do
    if delta ~= 0 then redis.call('HINCRBY', counts_key, status, delta) end
  end
  local freed = {}
  for _, target in ipairs(in_flight_order) do
    local delta = in_flight_deltas[target]
    if delta ~= 0 then
      local count = redis.call('HINCRBY', gate_key(base, target), 'inFlight', delta)
      local gate = read_gate(base, target)
      gate.inFlight = format_int(count)
      if gate.maxInFlight then
        touch_target(target)
        freed[target] = delta < 0
      end
    end
  end
  local woke = false
  for _, target in ipairs(touched_order) do
    local score = rescore_target(base, ready_key, target)
    if freed[target] and score and now and tonumber(score) <= tonumber(now) then woke = true end
  end
  return woke
end

-- The listing set of a status (keys.ts PartitionKeys `live`, `status`): the live statuses, PENDING and IN_FLIGHT, share
-- `live` (layout 7), so that a claim and a retry, which move a task between them, write no listing set; each ended
-- status has its own.
local function listing_set(base, status)
  if status == 'PENDING' or status == 'IN_FLIGHT' then return base .. 'live' end
  return base .. 'status:' .. status
end

-- Whether a status is final (ended: SUCCEEDED, FAILED, EXHAUSTED, CANCELLED), told by listing_set, which names
-- the live statuses once: a final task has a listing set of its own status.
local function is_final(status)
  return listing_set('', status) ~= 'live'
end

-- The sorted set of the partition's finished tasks by when their retention ends (keys.ts PartitionKeys `expiring`):
-- the purge's way in (purge-expired).
local function expiring_key(base)
  return base .. 'expiring'
end

-- Puts a task that is final with an `expires` (it has just ended, or is inserted ended) in `expiring` at that time.
-- A retry's outcome has no `expires`: the first test ends it, so the hot path of an attempt that will be retried
-- pays one table read.
local function index_expiry(base, id, state)
  local expires = state[FIELD.expires]
  if expires and is_final(state[FIELD.status]) then index_add(expiring_key(base), expires, id) end
end

-- The sorted set of the partition's callbacks owed (keys.ts PartitionKeys `callbacks`): the ids of ended tasks whose
-- callback is not a task of its own yet, scored by when they ended. Added to by the script that ends a task
-- (owe_callback), in the same write; read and emptied by the callback relay (settle-callbacks); the purge and the
-- deletes by hand keep a task while it is in it (callback_owed).
local function callbacks_key(base)
  return base .. 'callbacks'
end

-- Owes a task's callback when it has one and has just ended (`now`: the time of its end). A task without a callback
-- pays one table read. A task ended again before the relay made its earlier callback is owed once, its latest end.
local function owe_callback(base, id, state, now)
  if state[FIELD.callback] and is_final(state[FIELD.status]) then redis.call('ZADD', callbacks_key(base), now, id) end
end

-- Whether a task's callback is owed: the purge and the deletes by hand keep it until the relay made the callback.
local function callback_owed(base, id)
  return redis.call('ZSCORE', callbacks_key(base), id) ~= false
end

-- Moves a task's listing key from the listing set of status `old` (nil for a new task) to that of `new`, when they
-- differ, and keeps the per-status counts. No set is kept per policy (layout 4): a listing by policy filters them.
local function move_status(base, old, new, sort_key)
  if old == new then return end
  if old then count_deltas[old] = (count_deltas[old] or 0) - 1 end
  count_deltas[new] = (count_deltas[new] or 0) + 1
  local from, to = old and listing_set(base, old), listing_set(base, new)
  if from == to then return end
  if from then index_remove(from, sort_key) end
  index_add(to, 0, sort_key)
end

-- Puts the task in the index its new status calls for (PENDING: its target's queue by `due`; IN_FLIGHT:
-- leases by `lease_until`), takes it out of the one its old status had, and moves its listing key. The caller
-- deletes the lease fields of a task that leaves IN_FLIGHT. `state` is the task's record as read_state read it
-- (target and the whole listing key `sortKey` are taken from it).
local function reindex(base, leases_key, id, state, old, new, due, lease_until)
  local target = state[FIELD.target]
  if old == 'PENDING' and new ~= 'PENDING' then dequeue(base, target, id) end
  if new == 'PENDING' then enqueue(base, target, id, due) end
  if old == 'IN_FLIGHT' and new ~= 'IN_FLIGHT' then
    index_remove(leases_key, id)
    count_in_flight(target, -1)
  end
  if new == 'IN_FLIGHT' then
    index_add(leases_key, lease_until, id)
    if old ~= 'IN_FLIGHT' then count_in_flight(target, 1) end
  end
  move_status(base, old, new, state[FIELD.sortKey])
end

-- The listing key (keys.ts sortKeyOf: createdAt as 16 hex digits, then the id) of a record whose `sortKey` is as
-- stored: its 16 time digits (the id names the record). Layout 5's hashes could hold the whole key (a task stored
-- before it); layout 6's migration cut those, and the whole key still reads as it is.
local function listing_key(state, id)
  local stored = state[FIELD.sortKey]
  if stored and #stored == 16 then return stored .. id end
  return stored
end

local function tasks_key(base)
  return base .. 'tasks'
end

local function data_key(base)
  return base .. 'data'
end

-- A task's record unpacked: the values of TASK_FIELDS (false where absent), `sortKey` the whole listing key; every
-- value false when there is no such task.
local function unpack_state(packed, id)
  local state = packed and cmsgpack.unpack(packed) or {}
  -- A record written before a field was added ends early: the fields it lacks read as absent.
  for f = #state + 1, #TASK_FIELDS do state[f] = false end
  state[FIELD.sortKey] = listing_key(state, id)
  return state
end

-- The task's record (see unpack_state).
local function read_state(base, id)
  return unpack_state(redis.call('HGET', tasks_key(base), id), id)
end

-- A state (as read_state reads it, changed or not) as its record: the values of TASK_FIELDS in order, false where
-- absent, `sortKey` its 16 time digits (the id completes it). Copied into a new array: a script may keep its own
-- entries on a state table, which would make MessagePack write a map.
local function pack_state(state)
  local values = {}
  for f = 1, #TASK_FIELDS do values[f] = state[f] or false end
  local sort_key = values[FIELD.sortKey]
  if sort_key and #sort_key > 16 then values[FIELD.sortKey] = string.sub(sort_key, 1, 16) end
  return cmsgpack.pack(values)
end

-- Writes a task's record from its state (see pack_state).
local function write_state(base, id, state)
  redis.call('HSET', tasks_key(base), id, pack_state(state))
end

-- The task as scripts read it: { its state as read_state reads it, its data JSON }, or false when it does not exist.
local function read_task(base, id)
  local data = redis.call('HGET', data_key(base), id)
  if not data then return false end
  return { read_state(base, id), data }
end

-- A task (as read_task reads it) as scripts return it: { its state as JSON text, an array of the values of
-- TASK_FIELDS (false where absent), its data JSON }. Values only: field names would double the reply. One string
-- rather than 18: the client parses one JSON text faster than 18 bulk strings (task-codec.ts decodeTask). Every
-- value is text (numbers too: cjson would write a Lua number with 14 digits).
local function task_reply(task)
  return { cjson.encode(task[1]), task[2] }
end

-- Whether `status` is one of the statuses a named transition may start from: ARGV values from `first` on,
-- as pairs of from-status, to-status (core's TASK_TRANSITIONS, sent by the caller). Returns the to-status.
local function allowed_move(status, first)
  for i = first, #ARGV - 1, 2 do
    if ARGV[i] == status then return ARGV[i + 1] end
  end
  return nil
end

-- The start of a transition guarded by status and version: the task (as read_task reads it) and its to-status when
-- it exists, its status is a from-status of the ARGV pairs from `first` (allowed_move) and its version is `version`;
-- else nil, nil and the script's reply: { 'not_found' }, or { 'refused', task } (nothing may be written then).
local function guarded_move(base, id, first, version)
  local task = read_task(base, id)
  if not task then return nil, nil, { 'not_found' } end
  local state = task[1]
  local new = allowed_move(state[FIELD.status], first)
  if not new or tonumber(state[FIELD.version]) ~= tonumber(version) then return nil, nil, { 'refused', task_reply(task) } end
  return task, new, nil
end
