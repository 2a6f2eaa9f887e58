--[[
  limit-target: sets what claims may take from one target of a partition: a rate limit (a token bucket) and an
  in-flight limit, each possibly none.

  KEYS[1] ready    zset   targets with PENDING tasks, by when their queue is next claimable
  KEYS[2] targets  zset   every target ever seen, all scored 0

  ARGV[1] base         the partition's key prefix, `{prefix:partition}:`
  ARGV[2] target       the target key (an origin)
  ARGV[3] rate         tokens per second, encoded ('' = no rate limit, '=' .. value)
  ARGV[4] burst        the bucket's size, encoded ('' = 1; ignored without a rate)
  ARGV[5] maxInFlight  most tasks IN_FLIGHT at once, encoded ('' = no limit)
  ARGV[6] now          epoch ms: when the bucket's tokens are counted
  ARGV[7] channel      pub/sub channel of due wake-ups
  ARGV[8] message      wake-up message (`<instance id> <partition>`)

  Writes the limits to the target's gate. The bucket keeps its tokens as of now, capped at the new burst; a
  target that had no rate limit starts with a full bucket. The in-flight count is kept. Rescores the target in
  `ready` (its hold still applies) and records it in `targets`. Publishes a wake-up when this made the target's
  queue claimable now.
  Returns nothing. Errors: none.
]]
--- @include "task-state"

local base, target, now = ARGV[1], ARGV[2], ARGV[6]
local rate, burst, max_in_flight = decode_value(ARGV[3]), decode_value(ARGV[4]), decode_value(ARGV[5])
local key = gate_key(base, target)
local gate = read_gate(base, target)
local was = redis.call('ZSCORE', KEYS[1], target)

if rate then
  local size = tonumber(burst or '1')
  local tokens = size
  if gate.rate then tokens = math.min(size, bucket_tokens(gate, tonumber(now))) end
  redis.call('HSET', key, 'rate', rate, 'tokens', format_num(tokens), 'tokensAt', now)
  if burst then redis.call('HSET', key, 'burst', burst) else redis.call('HDEL', key, 'burst') end
else
  redis.call('HDEL', key, 'rate', 'burst', 'tokens', 'tokensAt')
end
if max_in_flight then
  redis.call('HSET', key, 'maxInFlight', max_in_flight)
else
  redis.call('HDEL', key, 'maxInFlight')
end
forget_gate(target)
index_add(KEYS[2], 0, target)
touch_target(target)
flush_indexes(base, nil, KEYS[1], nil)

local score = redis.call('ZSCORE', KEYS[1], target)
local claimable = function(s) return s and tonumber(s) <= tonumber(now) end
if claimable(score) and not claimable(was) then redis.call('PUBLISH', ARGV[7], ARGV[8]) end
