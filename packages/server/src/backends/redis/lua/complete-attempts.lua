--[[
  complete-attempts: applies the end of attempts (or of lapsed leases) of one partition, fenced.

  KEYS[1] leases   zset   IN_FLIGHT task ids by leaseExpiresAt
  KEYS[2] counts   hash   status -> number of tasks
  KEYS[3] ready    zset   targets with PENDING tasks, by when their queue is next claimable

  ARGV[1] base     the partition's key prefix, `{prefix:partition}:`
  ARGV[2] now      epoch ms: the new `updated`, and what "due now" means for the wake-up
  ARGV[3] channel  pub/sub channel of due wake-ups
  ARGV[4] message  wake-up message (`<instance id> <partition>`)
  ARGV[5] completions  JSON array, one array per completion (task-codec.ts encodeCompletion), its elements
                   strings, false for none (null):
                   [1] task id, [2] fencing token, [3] requireLeaseExpiredBy (false = none),
                   [4] has-ifCancelRequested (true / false),
                   [5], [6] attempt number of `attempt`, and the index in ARGV of its log entry (false = none),
                   [7], [8] the same of `attemptIfCancelRequested` (false = log `attempt` either way),
                   [9..] the `next` outcome's OUTCOME_FIELDS, then, when has-ifCancelRequested, the
                   `ifCancelRequested` outcome's OUTCOME_FIELDS (false = null)
  ARGV[6..]        attempt log entries (JSON members), where the completions point

  A completion applies only when its task is IN_FLIGHT with the same token and, with requireLeaseExpiredBy,
  a lease that lapsed by then. It then takes `ifCancelRequested` (and logs `attemptIfCancelRequested`, when
  given) if that is given and a cancel was requested, else `next` (and `attempt`); drops the lease; raises
  the version; sets updated = now. A task that becomes PENDING joins its target's queue (still held, if its
  target is); one that ends with an `expires` (its retention's end) joins `expiring` at that time, and one that ends
  with a callback joins `callbacks` at `now` (its callback is owed). Each applied
  completion frees an in-flight slot of its target (a target at its in-flight limit is ready again). The outcome
  itself was decided by the engine: no backoff is computed here.

  Returns one entry per completion, in order: false (fenced out), or the summary of the changed task
  { status, due (false = null), version, cancel ('1' / '0', as stored) }.
  Publishes one wake-up when a task became PENDING due at or before now (a reaped lease retried at once), or
  when a freed slot made a target with due tasks claimable.

  Errors (nothing written): `DUPLICATE_ATTEMPT <task id> <attempt number>` when an applicable completion
  logs an attempt number already in its task's log.
]]
--- @include "task-state"

local OUTCOME_FIELDS = { 'status', 'attempt', 'due', 'runStart', 'lastDelay', 'error', 'httpStatus', 'deadReason',
  'expires' }
-- Where an outcome starts in a completion's array.
local NEXT = 9

local base, now = ARGV[1], ARGV[2]
local completions = cjson.decode(ARGV[5])
local n = #completions

-- Check first: which completions apply, which branch each takes, and that none logs an attempt twice.
local states, seen = {}, {}
for c = 1, n do
  local entry = completions[c]
  local id, token, require_by = entry[1], entry[2], entry[3]
  local state = read_state(base, id)
  -- A second completion of one task in one call would find it no longer IN_FLIGHT: fenced out.
  local ok = not seen[id] and state[FIELD.status] == 'IN_FLIGHT' and tonumber(state[FIELD.token]) == tonumber(token)
  if ok and require_by then
    ok = state[FIELD.leaseUntil] and tonumber(state[FIELD.leaseUntil]) <= tonumber(require_by)
  end
  if ok then
    seen[id] = true
    local cancelled = entry[4] and state[FIELD.cancel] == '1'
    -- Where the attempt to log (number, entry) and the outcome start in the completion's array.
    local log_at, outcome_at = 5, NEXT
    if cancelled then
      if entry[7] then log_at = 7 end
      outcome_at = NEXT + #OUTCOME_FIELDS
    end
    state.log_at, state.outcome_at = log_at, outcome_at
    states[c] = state
    local attempt = entry[log_at]
    if attempt and redis.call('ZCOUNT', base .. 'attempts:' .. id, attempt, attempt) > 0 then
      return redis.error_reply('DUPLICATE_ATTEMPT ' .. id .. ' ' .. attempt)
    end
  end
end

local results, wake = {}, false
for c = 1, n do
  local state = states[c]
  if not state then
    results[c] = false
  else
    local entry = completions[c]
    local id = entry[1]
    local first = state.outcome_at
    local version = format_int(tonumber(state[FIELD.version]) + 1)
    for f = 1, #OUTCOME_FIELDS do state[FIELD[OUTCOME_FIELDS[f]]] = entry[first + f - 1] or false end
    state[FIELD.updated], state[FIELD.version] = now, version
    state[FIELD.owner], state[FIELD.leaseUntil] = false, false
    write_state(base, id, state)
    local new, due = entry[first], entry[first + 2] or nil
    reindex(base, KEYS[1], id, state, 'IN_FLIGHT', new, due, nil)
    index_expiry(base, id, state)
    owe_callback(base, id, state, now)
    if new == 'PENDING' and tonumber(due) <= tonumber(now) then wake = true end
    if entry[state.log_at] then
      redis.call('ZADD', base .. 'attempts:' .. id, entry[state.log_at], ARGV[entry[state.log_at + 1]])
    end
    results[c] = { new, due or false, version, state[FIELD.cancel] or '0' }
  end
end

if flush_indexes(base, KEYS[2], KEYS[3], now) then wake = true end
if wake then redis.call('PUBLISH', ARGV[3], ARGV[4]) end
return results
