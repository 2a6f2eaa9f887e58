--[[
  hold-target: holds one target of a partition until a time: claims skip its queue meanwhile.

  KEYS[1] ready    zset   targets with PENDING tasks, by when their queue is next claimable
  KEYS[2] holds    hash   target -> held until (epoch ms)

  ARGV[1] base     the partition's key prefix, `{prefix:partition}:`
  ARGV[2] target   the target key (an origin)
  ARGV[3] until    epoch ms; replaces any earlier hold
  ARGV[4] now      epoch ms: a hold that ends by now is no hold, and is deleted rather than kept

  Rescores the target in `ready` (max of its earliest due time and the hold), so its queue is neither read by
  claims nor counted by the next due time before `until`. A target with no PENDING task is only recorded.
  Returns nothing. Errors: none.
]]
--- @include "task-state"

local base, target = ARGV[1], ARGV[2]
if tonumber(ARGV[3]) > tonumber(ARGV[4]) then
  redis.call('HSET', KEYS[2], target, ARGV[3])
else
  redis.call('HDEL', KEYS[2], target)
end
rescore_target(base, KEYS[1], KEYS[2], target)
