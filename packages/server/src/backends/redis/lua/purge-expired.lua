--[[
  purge-expired: deletes the finished tasks of one partition whose retention has passed, earliest first, each with
  everything it has in the partition.

  KEYS[1] expiring  zset   finished task ids by expiresAt
  KEYS[2] idem      hash   idempotency key -> task id
  KEYS[3] counts    hash   status -> number of tasks

  ARGV[1] base         the partition's key prefix, `{prefix:partition}:`
  ARGV[2] now          epoch ms: a task whose `expires` is at or before it goes
  ARGV[3] limit        how many entries of `expiring` are taken at most (so at most this many tasks deleted)
  ARGV[4] keyAt        where a data JSON array (layout 5 on) holds the idempotency key, 1-based (task-codec.ts
                       DATA_ARRAY_FIELDS)
  ARGV[5] bodyRefAt    where it holds the body reference
  ARGV[6] keyName      the idempotency key's property in a data JSON object (layout 4)
  ARGV[7] bodyRefName  the body reference's property there

  Takes the first `limit` entries of `expiring` scored at or before now. Each whose task is final with an `expires`
  at or before now is deleted: its record (`tasks`) and data (`data`) fields, its attempt log (`attempts:<id>`), its
  idempotency key's entry in `idem` when that still names it (the key is free for a new task from then on), its
  listing key in `status:<status>`, its count in `counts`, and its entry. A finished task is in no queue, lease
  index or in-flight count, so no `ready` score changes; its target stays in `targets` with its gate (they are the
  target's, and outlive its tasks, as holds and limits do). The body kept apart (`bodyRef`) is the caller's to
  delete.

  An entry whose task is gone or live again, or final without an `expires` (left by a retryd that knew no retention,
  whose replay does not leave `expiring`), is dropped and nothing deleted; one whose task's `expires` is later than
  its score is moved to it. A task whose data JSON cannot be read (this store never writes one) loses its entry and
  is kept: deleted without its idempotency key, it would leave an `idem` entry naming no task, which an insert of
  that key could not read.

  Returns { id, status, bodyRef (false = none) } per deleted task, earliest first.
  Errors: none.
]]
--- @include "task-state"

local base, now = ARGV[1], ARGV[2]
local key_at, body_ref_at, key_name, body_ref_name = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], ARGV[7]
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local n = #ids
if n == 0 then return {} end

-- A data JSON with each lone UTF-16 surrogate, which JSON.stringify writes as a `\udXXX` escape and cjson refuses,
-- as U+FFFD: what writing the text as UTF-8 made of it, so a key read here is the key `idem` holds (insert-tasks
-- took it well-formed). An escape follows an odd run of backslashes (`\\udc00` is a backslash, then text), and
-- JSON.stringify escapes no surrogate of a pair, so every such escape is a lone one.
local function without_lone_surrogates(json)
  if not string.find(json, '\\u[dD][89a-fA-F]') then return json end
  return (string.gsub(json, '(\\+)(u[dD][89a-fA-F]%x%x)', function(slashes)
    if #slashes % 2 == 1 then return slashes .. 'ufffd' end
    return nil
  end))
end

-- Reads a task's data JSON: true, its idempotency key and its body reference (nil where absent), or false when
-- it cannot be read.
local function data_fields(json)
  local ok, d = pcall(cjson.decode, without_lone_surrogates(json))
  if not ok or type(d) ~= 'table' then return false end
  local key, body_ref
  if string.sub(json, 1, 1) == '[' then
    key, body_ref = d[key_at], d[body_ref_at]
  else
    key, body_ref = d[key_name], d[body_ref_name]
  end
  -- cjson reads JSON null as cjson.null, and an array cut short leaves nil.
  if type(key) ~= 'string' then key = nil end
  if type(body_ref) ~= 'string' then body_ref = nil end
  return true, key, body_ref
end

-- Calls `command` on `key` with `items` as its further arguments, CHUNK at a time.
local function call_chunked(command, key, items)
  for i = 1, #items, CHUNK do redis.call(command, key, unpack(items, i, math.min(i + CHUNK - 1, #items))) end
end

-- Every task's record and data, with one HMGET each.
local records, datas = {}, {}
for i = 1, n, CHUNK do
  local last = math.min(i + CHUNK - 1, n)
  local packed = redis.call('HMGET', tasks_key(base), unpack(ids, i, last))
  local json = redis.call('HMGET', data_key(base), unpack(ids, i, last))
  for j = 1, last - i + 1 do
    records[i + j - 1], datas[i + j - 1] = packed[j], json[j]
  end
end

local purged, gone, logs, idem_keys, idem_owners = {}, {}, {}, {}, {}
for i = 1, n do
  local id = ids[i]
  local state = records[i] and unpack_state(records[i], id)
  local expires = state and is_final(state[FIELD.status]) and state[FIELD.expires]
  if expires and tonumber(expires) > tonumber(now) then
    index_add(KEYS[1], expires, id)
  else
    index_remove(KEYS[1], id)
    local readable, key, body_ref = false, nil, nil
    if expires and datas[i] then readable, key, body_ref = data_fields(datas[i]) end
    if readable then
      local status = state[FIELD.status]
      gone[#gone + 1] = id
      logs[#logs + 1] = base .. 'attempts:' .. id
      index_remove(listing_set(base, status), state[FIELD.sortKey])
      count_deltas[status] = (count_deltas[status] or 0) - 1
      if key then
        local k = #idem_keys + 1
        idem_keys[k], idem_owners[k] = key, id
      end
      purged[#purged + 1] = { id, status, body_ref or false }
    end
  end
end

if #gone > 0 then
  -- Only the keys that still name their task are freed (a key names one task at a time; checked all the same).
  local freed = {}
  for i = 1, #idem_keys, CHUNK do
    local holders = redis.call('HMGET', KEYS[2], unpack(idem_keys, i, math.min(i + CHUNK - 1, #idem_keys)))
    for j = 1, #holders do
      if holders[j] == idem_owners[i + j - 1] then freed[#freed + 1] = idem_keys[i + j - 1] end
    end
  end
  call_chunked('HDEL', KEYS[2], freed)
  call_chunked('HDEL', tasks_key(base), gone)
  call_chunked('HDEL', data_key(base), gone)
  for i = 1, #logs, CHUNK do redis.call('DEL', unpack(logs, i, math.min(i + CHUNK - 1, #logs))) end
end
-- The entries and listing keys, and the counts. No target was touched (a finished task is in no queue), so no
-- `ready` key is needed.
flush_indexes(base, KEYS[3], nil, nil)
return purged
