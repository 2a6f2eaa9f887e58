--[[
  migrate-records: moves tasks of one partition from layout 5 (a hash and a string per task) to layout 6 (a field
  in each of the partition's `tasks` and `data` hashes). Safe to run again: a task already moved has no hash left.

  KEYS[1] tasks   hash   task id -> the task's record (written as every script writes it: write_state)
  KEYS[2] data    hash   task id -> the task's data JSON

  ARGV[1] base    the partition's key prefix, `{prefix:partition}:`
  ARGV[2..]       task ids

  Each task's hash `task:<id>` becomes its record (the values of TASK_FIELDS, `sortKey` cut to its 16 time digits
  where a task written before layout 5 holds the whole listing key), its string `data:<id>` its field in `data`
  (the JSON as it is: a layout 4 object still reads), and both keys are deleted. Indexes and attempt logs name
  tasks by id and stay as they are.

  Returns how many tasks were moved.
  Errors: none.
]]
--- @include "task-state"

local base = ARGV[1]
local moved = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  local hash, string_key = base .. 'task:' .. id, base .. 'data:' .. id
  local state = redis.call('HMGET', hash, unpack(TASK_FIELDS))
  if state[FIELD.status] then
    write_state(base, id, state)
    local data = redis.call('GET', string_key)
    if data then redis.call('HSET', data_key(base), id, data) end
    redis.call('DEL', hash, string_key)
    moved = moved + 1
  end
end
return moved
