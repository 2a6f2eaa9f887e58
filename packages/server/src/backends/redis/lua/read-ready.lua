--[[
  read-ready: the ready target queues of one partition and how many due tasks each has (capped), for a claim
  that shares its slots over several partitions. Writes nothing.

  KEYS[1] ready    zset   targets with PENDING tasks, by when their queue is next claimable

  ARGV[1] base     the partition's key prefix, `{prefix:partition}:`
  ARGV[2] now      epoch ms
  ARGV[3] cap      the most any queue can be offered (the claim's limit)
  ARGV[4] times    'times': also reply with due times (for tenants with sub-partitions); absent: counts only

  Returns a flat list: target, n = min(number of its tasks due by now, cap, what its limits allow now: its whole
  tokens and free in-flight slots), and with 'times' then the due times of its first n tasks, earliest first (so a
  claim can take a queue split over sub-partitions earliest due first), for every target whose `ready` score is
  <= now, in no particular order. Reads no held or throttled target's queue. Errors: none.
]]
--- @include "task-state"

local base, now, cap = ARGV[1], ARGV[2], tonumber(ARGV[3])
local times = ARGV[4] == 'times'
local reply = {}
for _, target in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
  local allowed = math.min(cap, offer_cap(read_gate(base, target), tonumber(now)))
  reply[#reply + 1] = target
  if times then
    local due = {}
    if allowed > 0 then due = redis.call('ZRANGEBYSCORE', queue_key(base, target), '-inf', now, 'WITHSCORES', 'LIMIT', 0, allowed) end
    reply[#reply + 1] = #due / 2
    for i = 2, #due, 2 do reply[#reply + 1] = due[i] end
  else
    reply[#reply + 1] = math.min(redis.call('ZCOUNT', queue_key(base, target), '-inf', now), allowed)
  end
end
return reply
