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
  at or before now is deleted with everything it has in the partition (see the include task-deletion).

  An entry whose task is gone or live again, or final without an `expires` (left by a retryd that knew no retention,
  whose replay does not leave `expiring`), is dropped and nothing deleted; one whose task's `expires` is later than
  its score is moved to it. A task whose data JSON cannot be read (this store never writes one) loses its entry and
  is kept (see mark_deleted).

  Returns { id, status, bodyRef (false = none) } per deleted task, earliest first.
  Errors: none.
]]
--- @include "task-state"
--- @include "task-deletion"

local base, now = ARGV[1], ARGV[2]
local at = data_positions(4)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local n = #ids
if n == 0 then return {} end

local records, datas = read_records(base, ids)
for i = 1, n do
  local id = ids[i]
  local state = records[i] and unpack_state(records[i], id)
  local expires = state and is_final(state[FIELD.status]) and state[FIELD.expires]
  if expires and tonumber(expires) > tonumber(now) then
    index_add(KEYS[1], expires, id)
  elseif expires and callback_owed(base, id) then
    -- Kept, and left in `expiring`, while its callback is owed: the relay reads the task to make it.
  else
    index_remove(KEYS[1], id)
    if expires then mark_deleted(base, id, state, datas[i], at) end
  end
end
return delete_marked(base, KEYS[2], KEYS[3])
