-- Deleting finished tasks, shared by the retention's purge (purge-expired) and the deletes by hand
-- (delete-finished); spliced in after `--- @include "task-state"`, whose helpers it uses.
--
-- A task goes with everything it has in the partition: its record (`tasks`) and data (`data`) fields, its attempt
-- log (`attempts:<id>`), its idempotency key's entry in `idem` when that still names it (the key is free for a new
-- task from then on), its listing key in `status:<status>`, its count in `counts` and its entry in `expiring`. A
-- finished task is in no queue, lease index or in-flight count, so no `ready` score changes; its target stays in
-- `targets` with its gate (they are the target's, and outlive its tasks, as holds and limits do). The body kept
-- apart (`bodyRef`) is the caller's to delete.

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
-- it cannot be read. `at` holds where the fields are: `{ key_at, body_ref_at }` in an array (layout 5 on, 1-based:
-- task-codec.ts DATA_ARRAY_FIELDS) and `{ key_name, body_ref_name }` in an object (layout 4).
local function data_fields(json, at)
  local ok, d = pcall(cjson.decode, without_lone_surrogates(json))
  if not ok or type(d) ~= 'table' then return false end
  local key, body_ref
  if string.sub(json, 1, 1) == '[' then
    key, body_ref = d[at.key_at], d[at.body_ref_at]
  else
    key, body_ref = d[at.key_name], d[at.body_ref_name]
  end
  -- cjson reads JSON null as cjson.null, and an array cut short leaves nil.
  if type(key) ~= 'string' then key = nil end
  if type(body_ref) ~= 'string' then body_ref = nil end
  return true, key, body_ref
end

-- Where the data JSON holds the idempotency key and the body reference, from four arguments starting at ARGV[first]:
-- key_at, body_ref_at, key_name, body_ref_name.
local function data_positions(first)
  return { key_at = tonumber(ARGV[first]), body_ref_at = tonumber(ARGV[first + 1]), key_name = ARGV[first + 2],
    body_ref_name = ARGV[first + 3] }
end

-- Calls `command` on `key` with `items` as its further arguments, CHUNK at a time.
local function call_chunked(command, key, items)
  for i = 1, #items, CHUNK do redis.call(command, key, unpack(items, i, math.min(i + CHUNK - 1, #items))) end
end

-- Every task's record and data (false where absent), with one HMGET each per CHUNK ids.
local function read_records(base, ids)
  local records, datas = {}, {}
  for i = 1, #ids, CHUNK do
    local last = math.min(i + CHUNK - 1, #ids)
    local packed = redis.call('HMGET', tasks_key(base), unpack(ids, i, last))
    local json = redis.call('HMGET', data_key(base), unpack(ids, i, last))
    for j = 1, last - i + 1 do
      records[i + j - 1], datas[i + j - 1] = packed[j], json[j]
    end
  end
  return records, datas
end

-- The tasks marked for deletion, and what goes with them; written by delete_marked.
local deleted, gone, logs, idem_keys, idem_owners = {}, {}, {}, {}, {}

-- Marks a finished task (its decoded `state` and its data JSON) for deletion; false, and nothing marked, when its
-- data JSON cannot be read (this store never writes one): deleted without its idempotency key, it would leave an
-- `idem` entry naming no task, which an insert of that key could not read. Its `expiring` entry is the caller's.
local function mark_deleted(base, id, state, data, at)
  local readable, key, body_ref = false, nil, nil
  if data then readable, key, body_ref = data_fields(data, at) end
  if not readable then return false end
  local status = state[FIELD.status]
  gone[#gone + 1] = id
  logs[#logs + 1] = base .. 'attempts:' .. id
  index_remove(listing_set(base, status), state[FIELD.sortKey])
  count_deltas[status] = (count_deltas[status] or 0) - 1
  if key then
    local k = #idem_keys + 1
    idem_keys[k], idem_owners[k] = key, id
  end
  deleted[#deleted + 1] = { id, status, body_ref or false }
  return true
end

-- Deletes the marked tasks and writes the index changes and counts; returns { id, status, bodyRef (false = none) }
-- per task, in the order marked.
local function delete_marked(base, idem_key, counts_key)
  if #gone > 0 then
    -- Only the keys that still name their task are freed (a key names one task at a time; checked all the same).
    local freed = {}
    for i = 1, #idem_keys, CHUNK do
      local holders = redis.call('HMGET', idem_key, unpack(idem_keys, i, math.min(i + CHUNK - 1, #idem_keys)))
      for j = 1, #holders do
        if holders[j] == idem_owners[i + j - 1] then freed[#freed + 1] = idem_keys[i + j - 1] end
      end
    end
    call_chunked('HDEL', idem_key, freed)
    call_chunked('HDEL', tasks_key(base), gone)
    call_chunked('HDEL', data_key(base), gone)
    for i = 1, #logs, CHUNK do redis.call('DEL', unpack(logs, i, math.min(i + CHUNK - 1, #logs))) end
  end
  -- The entries and listing keys, and the counts. No target was touched (a finished task is in no queue), so no
  -- `ready` key is needed.
  flush_indexes(base, counts_key, nil, nil)
  return deleted
end
