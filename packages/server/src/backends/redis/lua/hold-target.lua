--[[
  hold-target: holds one target of a partition until a time: claims skip its queue meanwhile.

  KEYS[1] ready    zset   targets with PENDING tasks, by when their queue is next claimable
  KEYS[2] targets  zset   every target ever seen, all scored 0

  ARGV[1] base     the partition's key prefix, `{prefix:partition}:`
  ARGV[2] target   the target key (an origin)
  ARGV[3] until    epoch ms; holds extend: the target stays held until the latest `until` it was given
  ARGV[4] now      epoch ms: a hold that ends by now is no hold, and is deleted rather than kept

  Sets the gate's `held` to max(held, until) and rescores the target in `ready`, so its queue is neither read
  by claims nor counted by the next due time before then. A target not yet known is recorded in `targets`.
  Returns nothing. Errors: none.
]]
--- @include "task-state"

local base, target, now = ARGV[1], ARGV[2], ARGV[4]
local held = read_gate(base, target).held
local held_until = ARGV[3]
if held and tonumber(held) > tonumber(held_until) then held_until = held end
if tonumber(held_until) > tonumber(now) then
  redis.call('HSET', gate_key(base, target), 'held', held_until)
else
  redis.call('HDEL', gate_key(base, target), 'held')
end
forget_gate(target)
index_add(KEYS[2], 0, target)
touch_target(target)
flush_indexes(base, nil, KEYS[1], nil)
