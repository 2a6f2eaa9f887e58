--[[
  delete-finished: deletes finished tasks of one partition by hand (`Store.deleteFinishedTasks`), each only if it is
  still finished and at the version its caller listed it at, with everything it has in the partition.

  KEYS[1] expiring  zset   finished task ids by expiresAt
  KEYS[2] idem      hash   idempotency key -> task id
  KEYS[3] counts    hash   status -> number of tasks

  ARGV[1] base         the partition's key prefix, `{prefix:partition}:`
  ARGV[2..5]           where the data JSON holds the idempotency key and the body reference: keyAt, bodyRefAt (in
                       an array, 1-based: task-codec.ts DATA_ARRAY_FIELDS), keyName, bodyRefName (in an object)
  ARGV[6..]            pairs: a task id, the version it was listed at

  A task is deleted (see the include task-deletion) when its record exists, its status is final and its version is
  the one given: a task replayed since it was listed (live, or finished again at a later version) stays, and so does
  an id of no task in this partition (another tenant's). A task whose data JSON cannot be read (this store never
  writes one) stays too (see mark_deleted). An id given twice is deleted once.

  Returns { id, status, bodyRef (false = none) } per deleted task, in the order given.
  Errors: none.
]]
--- @include "task-state"
--- @include "task-deletion"

local base = ARGV[1]
local at = data_positions(2)
local ids, versions, seen = {}, {}, {}
for i = 6, #ARGV, 2 do
  local id = ARGV[i]
  if not seen[id] then
    seen[id] = true
    local n = #ids + 1
    ids[n], versions[n] = id, tonumber(ARGV[i + 1])
  end
end
if #ids == 0 then return {} end

local records, datas = read_records(base, ids)
for i = 1, #ids do
  local id = ids[i]
  local state = records[i] and unpack_state(records[i], id)
  -- A task whose callback is owed is kept, as by the purge.
  if state and is_final(state[FIELD.status]) and tonumber(state[FIELD.version]) == versions[i] and not callback_owed(base, id) then
    if mark_deleted(base, id, state, datas[i], at) then index_remove(KEYS[1], id) end
  end
end
return delete_marked(base, KEYS[2], KEYS[3])
