--[[
  complete-attempts: applies the end of attempts (or of lapsed leases) of one partition, fenced.

  KEYS[1] leases   zset   IN_FLIGHT task ids by leaseExpiresAt
  KEYS[2] counts   hash   status -> number of tasks
  KEYS[3] ready    zset   targets with PENDING tasks, by when their queue is next claimable

  ARGV[1] base     the partition's key prefix, `{prefix:partition}:`
  ARGV[2] now      epoch ms: the new `updated`, and what "due now" means for the wake-up
  ARGV[3] channel  pub/sub channel of due wake-ups
  ARGV[4] message  wake-up message (`<instance id> <partition>`)
  ARGV[5] n        number of completions; then per completion 8 + 2 * #OUTCOME_FIELDS values:
                   task id, fencing token, requireLeaseExpiredBy ('' = none),
                   has-ifCancelRequested ('1' / '0'),
                   attempt number and attempt log entry (JSON member) of `attempt` ('' and '' = none),
                   the same of `attemptIfCancelRequested` ('' and '' = log `attempt` either way),
                   the `next` outcome's OUTCOME_FIELDS, the `ifCancelRequested` outcome's OUTCOME_FIELDS
                   (encoded: '' = null, '=' .. value; ignored when has-ifCancelRequested is '0')

  A completion applies only when its task is IN_FLIGHT with the same token and, with requireLeaseExpiredBy,
  a lease that lapsed by then. It then takes `ifCancelRequested` (and logs `attemptIfCancelRequested`, when
  given) if that is given and a cancel was requested, else `next` (and `attempt`); drops the lease; raises
  the version; sets updated = now. A task that becomes PENDING joins its target's queue (still held, if its
  target is). Each applied completion frees an in-flight slot of its target (a target at its in-flight limit
  is ready again). The outcome itself was decided by the engine: no backoff is computed here.

  Returns one entry per completion, in order: false (fenced out), or the summary of the changed task
  { status, due (false = null), version, cancel ('1' / '0', as stored) }.
  Publishes one wake-up when a task became PENDING due at or before now (a reaped lease retried at once), or
  when a freed slot made a target with due tasks claimable.

  Errors (nothing written): `DUPLICATE_ATTEMPT <task id> <attempt number>` when an applicable completion
  logs an attempt number already in its task's log.
]]
--- @include "task-state"

local OUTCOME_FIELDS = { 'status', 'attempt', 'due', 'runStart', 'lastDelay', 'error', 'httpStatus', 'deadReason' }
local WIDTH = 8 + 2 * #OUTCOME_FIELDS

local base, now = ARGV[1], ARGV[2]
local n = tonumber(ARGV[5])

-- Check first: which completions apply, which branch each takes, and that none logs an attempt twice.
local states, seen = {}, {}
for c = 0, n - 1 do
  local at = 6 + c * WIDTH
  local id, token, require_by = ARGV[at], ARGV[at + 1], ARGV[at + 2]
  local state = read_state(base, id)
  -- A second completion of one task in one call would find it no longer IN_FLIGHT: fenced out.
  local ok = not seen[id] and state[FIELD.status] == 'IN_FLIGHT' and tonumber(state[FIELD.token]) == tonumber(token)
  if ok and require_by ~= '' then
    ok = state[FIELD.leaseUntil] and tonumber(state[FIELD.leaseUntil]) <= tonumber(require_by)
  end
  if ok then
    seen[id] = true
    local cancelled = ARGV[at + 3] == '1' and state[FIELD.cancel] == '1'
    -- Where the attempt to log (number, entry) and the outcome start in ARGV.
    local log_at, outcome_at = at + 4, at + 8
    if cancelled then
      if ARGV[at + 6] ~= '' then log_at = at + 6 end
      outcome_at = outcome_at + #OUTCOME_FIELDS
    end
    state.log_at, state.outcome_at = log_at, outcome_at
    states[c] = state
    local attempt = ARGV[log_at]
    if attempt ~= '' and redis.call('ZCOUNT', base .. 'attempts:' .. id, attempt, attempt) > 0 then
      return redis.error_reply('DUPLICATE_ATTEMPT ' .. id .. ' ' .. attempt)
    end
  end
end

local results, wake = {}, false
for c = 0, n - 1 do
  local state = states[c]
  if not state then
    results[c + 1] = false
  else
    local id = ARGV[6 + c * WIDTH]
    local key = base .. 'task:' .. id
    local first = state.outcome_at
    local version = format_int(tonumber(state[FIELD.version]) + 1)
    local set = { 'updated', now, 'version', version }
    local del = { 'owner', 'leaseUntil' }
    for f = 1, #OUTCOME_FIELDS do
      local value = decode_value(ARGV[first + f - 1])
      if value == nil then
        del[#del + 1] = OUTCOME_FIELDS[f]
      else
        set[#set + 1] = OUTCOME_FIELDS[f]
        set[#set + 1] = value
      end
    end
    redis.call('HSET', key, unpack(set))
    redis.call('HDEL', key, unpack(del))
    local new, due = decode_value(ARGV[first]), decode_value(ARGV[first + 2])
    reindex(base, KEYS[1], id, state, 'IN_FLIGHT', new, due, nil)
    if new == 'PENDING' and tonumber(due) <= tonumber(now) then wake = true end
    if ARGV[state.log_at] ~= '' then
      redis.call('ZADD', base .. 'attempts:' .. id, ARGV[state.log_at], ARGV[state.log_at + 1])
    end
    results[c + 1] = { new, due or false, version, state[FIELD.cancel] or '0' }
  end
end

if flush_indexes(base, KEYS[2], KEYS[3], now) then wake = true end
if wake then redis.call('PUBLISH', ARGV[3], ARGV[4]) end
return results
