--[[
  migrate-gates: brings the target gates of one partition from layout 2 (holds in one `holds` hash, no
  in-flight counts) to layout 3 (a `gate:<target>` hash per target). Safe to run again.

  KEYS[1] holds    hash   layout 2's holds, target -> held until (deleted once moved)
  KEYS[2] targets  zset   every target ever seen, all scored 0

  ARGV[1] base     the partition's key prefix, `{prefix:partition}:`
  ARGV[2..]        pairs of target, number of its tasks IN_FLIGHT (counted by the caller from `leases`)

  Moves each hold to its target's gate (`held`), and sets every known target's `inFlight` to its count (or
  deletes it: none in flight). `ready` is unchanged: no target has limits yet, and holds keep their times.
  Returns nothing. Errors: none.
]]
--- @include "task-state"

local base = ARGV[1]
local holds = redis.call('HGETALL', KEYS[1])
for i = 1, #holds - 1, 2 do
  redis.call('HSET', gate_key(base, holds[i]), 'held', holds[i + 1])
  redis.call('ZADD', KEYS[2], 0, holds[i])
end
redis.call('DEL', KEYS[1])

local counted = {}
for i = 2, #ARGV - 1, 2 do counted[ARGV[i]] = ARGV[i + 1] end
for _, target in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if counted[target] then
    redis.call('HSET', gate_key(base, target), 'inFlight', counted[target])
  else
    redis.call('HDEL', gate_key(base, target), 'inFlight')
  end
end
