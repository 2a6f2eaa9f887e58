--[[
  claim-due: leases due PENDING tasks of one partition, shared among its ready target queues.

  KEYS[1] ready    zset   targets with PENDING tasks, by when their queue is next claimable
  KEYS[2] leases   zset   IN_FLIGHT task ids by leaseExpiresAt
  KEYS[3] counts   hash   status -> number of tasks
  KEYS[4] order    zset   scratch: the ready targets in byte order (deleted before the script ends)

  ARGV[1] base         the partition's key prefix, `{prefix:partition}:`
  ARGV[2] now          epoch ms (the engine's clock, never Redis TIME)
  ARGV[3] limit        most tasks to claim
  ARGV[4] owner        worker id
  ARGV[5] leaseUntil   now + leaseMs, computed by the caller
  ARGV[6] mode         'share': apply the sharing rule; 'counts': take given counts of given queues
  share:  ARGV[7] after     the ring starts after this target ('' = at the first target)
          ARGV[8] room      the claim's room for every target not in the pairs ('' = none; `ClaimRooms`)
          ARGV[9..]         pairs of target, room: targets with another room (0: not ready for this claim)
  counts: ARGV[7..]         pairs of target, count: claim that many of each given queue (the caller shared the
                            slots over several partitions; limit is then ignored)

  In share mode, applies the port's sharing rule (store.ts ClaimOptions) to this partition: the ready queues
  are those whose `ready` score is <= now (a due task, no hold past now, a whole token if rate-limited, a free
  slot if in-flight-limited) and whose room is not 0; in byte order of target, starting after `after` and wrapping
  round, the first min(E, limit) of the E ready queues are each offered ceil(limit / min(E, limit)) slots, cut to
  their room and to what the target's limits allow (its whole tokens, its free in-flight slots), filled with the
  queue's earliest due tasks, and the tasks so found are dealt round robin (each queue's first, then each one's
  second, ...) until `limit` (a tenant's room is the caller's: it passes the lower of `limit` and it). In counts
  mode, a count is cut the same way, and a target no longer ready (held or throttled since the caller read
  `ready`) gives nothing.

  Reads `ready` by score up to now and then only the gates and queues it serves: a held or throttled target's
  queue is never read, whatever its size. Costs O(E) in the number of ready queues (they are sorted in a
  scratch sorted set, whose order is bytewise, where Lua's `<` would follow the server's locale).

  Each claimed task becomes IN_FLIGHT with owner and leaseUntil, a raised token and version, and
  updated = now; its due time is left as it was. Its target's bucket loses a token per task (rate-limited
  targets only) and its in-flight count rises.

  Returns { state JSON, data } per claimed task: in the order dealt, or, with pairs, queue by queue in the order
  given, each queue's earliest due first.
  Errors: none.
]]
--- @include "task-state"

local base, now, owner, lease_until = ARGV[1], ARGV[2], ARGV[4], ARGV[5]
local claimed = {}
-- Tasks taken per target, and the targets in the order first served.
local taken, served = {}, {}

local function claim(target, id)
  local state = read_state(base, id)
  if state[FIELD.status] ~= 'PENDING' then
    -- A queue holds PENDING tasks only; drop a stray entry rather than hand out a task twice.
    dequeue(base, target, id)
    return
  end
  reindex(base, KEYS[2], id, state, 'PENDING', 'IN_FLIGHT', nil, lease_until)
  state[FIELD.status], state[FIELD.owner], state[FIELD.leaseUntil] = 'IN_FLIGHT', owner, lease_until
  state[FIELD.updated] = now
  state[FIELD.token] = format_int(tonumber(state[FIELD.token]) + 1)
  state[FIELD.version] = format_int(tonumber(state[FIELD.version]) + 1)
  write_state(base, id, state)
  claimed[#claimed + 1] = task_reply({ state, redis.call('HGET', data_key(base), id) })
  taken[target] = taken[target] + 1
end

-- The earliest due tasks of a ready queue, up to `wanted` and what the target's limits allow now.
local function due_ids(target, wanted)
  served[#served + 1] = target
  taken[target] = 0
  local count = math.min(wanted, offer_cap(read_gate(base, target), tonumber(now)))
  -- Ready yet nothing to offer only if `ready` was stale: rescore it rather than meet it again.
  if count <= 0 then
    touch_target(target)
    return {}
  end
  return redis.call('ZRANGEBYSCORE', queue_key(base, target), '-inf', now, 'LIMIT', 0, count)
end

if ARGV[6] == 'counts' then
  for i = 7, #ARGV - 1, 2 do
    local target = ARGV[i]
    -- Still ready: a hold, a limit or another claim since the caller read `ready` wins.
    local score = redis.call('ZSCORE', KEYS[1], target)
    if score and tonumber(score) <= tonumber(now) then
      for _, id in ipairs(due_ids(target, tonumber(ARGV[i + 1]))) do claim(target, id) end
    end
  end
else
  local limit, after = tonumber(ARGV[3]), ARGV[7]
  local ready = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
  local default_room = tonumber(ARGV[8])
  local rooms = nil
  if default_room or #ARGV > 8 then
    rooms = {}
    for i = 9, #ARGV - 1, 2 do rooms[ARGV[i]] = tonumber(ARGV[i + 1]) end
    local roomy = {}
    for _, target in ipairs(ready) do
      local room = rooms[target] or default_room
      if room == nil or room > 0 then roomy[#roomy + 1] = target end
    end
    ready = roomy
  end
  local e = #ready
  if e == 0 then return claimed end
  local considered = math.min(e, limit)
  local share = math.ceil(limit / considered)
  local ring = ready
  if e > 1 then
    -- Left over only if a call failed part-way; stale members would put targets that are not ready in the ring.
    redis.call('DEL', KEYS[4])
    for i = 1, e, CHUNK / 2 do
      local entries = {}
      for j = i, math.min(i + CHUNK / 2 - 1, e) do
        entries[#entries + 1] = 0
        entries[#entries + 1] = ready[j]
      end
      redis.call('ZADD', KEYS[4], unpack(entries))
    end
    if after == '' then
      ring = redis.call('ZRANGEBYLEX', KEYS[4], '-', '+', 'LIMIT', 0, considered)
    else
      ring = redis.call('ZRANGEBYLEX', KEYS[4], '(' .. after, '+', 'LIMIT', 0, considered)
      if #ring < considered then
        local wrapped = redis.call('ZRANGEBYLEX', KEYS[4], '-', '[' .. after, 'LIMIT', 0, considered - #ring)
        for _, target in ipairs(wrapped) do ring[#ring + 1] = target end
      end
    end
    redis.call('DEL', KEYS[4])
  end
  local queues = {}
  for q = 1, considered do
    local room = rooms and (rooms[ring[q]] or default_room)
    queues[q] = due_ids(ring[q], room and math.min(share, room) or share)
  end
  local dealt = 0
  for round = 1, share do
    for q = 1, considered do
      local id = queues[q][round]
      if id and dealt < limit then
        dealt = dealt + 1
        claim(ring[q], id)
      end
    end
  end
end

for _, target in ipairs(served) do take_tokens(base, target, read_gate(base, target), taken[target], now) end
flush_indexes(base, KEYS[3], KEYS[1], nil)
return claimed
