--[[
  release-target: ends a target's hold at once.

  KEYS[1] ready    zset   targets with PENDING tasks, by when their queue is next claimable

  ARGV[1] base     the partition's key prefix, `{prefix:partition}:`
  ARGV[2] target   the target key (an origin)
  ARGV[3] now      epoch ms: what "due now" means for the wake-up
  ARGV[4] channel  pub/sub channel of due wake-ups
  ARGV[5] message  wake-up message (`<instance id> <partition>`)

  Deletes the gate's `held` and rescores the target in `ready` (its limits still apply). A target not held is
  left as it is. Publishes a wake-up when the target's queue is claimable now.
  Returns nothing. Errors: none.
]]
--- @include "task-state"

local base, target = ARGV[1], ARGV[2]
if redis.call('HDEL', gate_key(base, target), 'held') == 0 then return end
local score = rescore_target(base, KEYS[1], target)
if score and tonumber(score) <= tonumber(ARGV[3]) then redis.call('PUBLISH', ARGV[4], ARGV[5]) end
