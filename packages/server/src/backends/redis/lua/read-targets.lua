--[[
  read-targets: the gate and counts of targets of one partition, for operators. Writes nothing.

  KEYS[1] targets  zset   every target ever seen, held or limited, all scored 0

  ARGV[1] base     the partition's key prefix, `{prefix:partition}:`
  ARGV[2] now      epoch ms
  ARGV[3] cap      where due tasks stop being counted
  ARGV[4] mode     'one': the target ARGV[5], if known; 'page': up to ARGV[6] targets in byte order from the
                   BYLEX bound ARGV[5] ('-' for the first, '(' .. last target of the previous page)

  Returns one entry per target: { target, its gate's GATE_FIELDS as stored (false where absent), the earliest
  due time of its queue (false: empty), min(its tasks due by now, cap), when its rate limit's next whole
  token comes if it has none now (false otherwise) }. Each costs a few reads by key: the gate, the queue's
  head, a ZCOUNT (O(log n) in the queue's length).
  Errors: none.
]]
--- @include "task-state"

local base, now, cap = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local names
if ARGV[4] == 'one' then
  names = {}
  if redis.call('ZSCORE', KEYS[1], ARGV[5]) then names[1] = ARGV[5] end
else
  names = redis.call('ZRANGE', KEYS[1], ARGV[5], '+', 'BYLEX', 'LIMIT', 0, tonumber(ARGV[6]))
end

local reply = {}
for i, target in ipairs(names) do
  local gate = read_gate(base, target)
  local head = redis.call('ZRANGE', queue_key(base, target), 0, 0, 'WITHSCORES')
  local due = math.min(redis.call('ZCOUNT', queue_key(base, target), '-inf', ARGV[2]), cap)
  local throttled = false
  if gate.rate and bucket_tokens(gate, now) < 1 then throttled = format_num(next_token_at(gate) or now) end
  local stored = {}
  for f, name in ipairs(GATE_FIELDS) do stored[f] = gate[name] or false end
  reply[i] = { target, stored, head[2] or false, due, throttled }
end
return reply
