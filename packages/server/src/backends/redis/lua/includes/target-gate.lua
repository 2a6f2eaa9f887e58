-- The gate of a target (spliced into task-state, so every task script has it): what claims may take from a
-- target's queue, kept in the hash `gate:<target>` under the partition's base. Its fields (GATE_FIELDS, the
-- order read-targets returns them in; target-gate.ts GATE_FIELDS must be the same list):
--
--   held         until when claims skip the target (epoch ms; a hold whose end has passed may stay)
--   rate         the rate limit, tokens per second (absent: none)
--   burst        the token bucket's size (absent with a rate: 1)
--   maxInFlight  the concurrency limit (absent: none)
--   tokens       the bucket's tokens at `tokensAt` (present with a rate)
--   tokensAt     epoch ms
--   inFlight     the target's tasks IN_FLIGHT now, kept by every script that moves a task in or out of IN_FLIGHT
--
-- The bucket is a line: tokens(t) = min(burst, tokens + (t - tokensAt) * rate / 1000), evaluated in this order
-- (100 ms at 10/s is exactly 1). A claim offers a target the bucket's whole tokens now and its free in-flight
-- slots, and writes back the point of the line at its `now`, less what it took. A `now` before `tokensAt`
-- (an instance whose clock is behind) reads the same line earlier, so it finds fewer tokens, never more.
--
-- Numbers: held and tokensAt are texts from the arguments, kept as they came. `tokens` and the time of the next
-- token are computed here, so they are written with format_num, the shortest of %.15g, %.16g and %.17g that
-- reads back as the same double (%.17g always does; test/redis-target-gate.test.ts checks it on Redis's Lua).

local GATE_FIELDS = { 'held', 'rate', 'burst', 'maxInFlight', 'tokens', 'tokensAt', 'inFlight' }

local function format_num(x)
  for digits = 15, 17 do
    local text = string.format('%.' .. digits .. 'g', x)
    if tonumber(text) == x then return text end
  end
end

local function gate_key(base, target)
  return base .. 'gate:' .. target
end

-- Gates read by this call, by target: a script reads each target's gate once and keeps its copy current as it
-- writes (take_tokens, flush_indexes), so rescoring after a claim costs no second read.
local gates = {}

-- A target's gate as stored: its fields by name, as text (nil where absent), read with HGETALL. A target with
-- no limit and no hold has at most `inFlight`, so reading its gate costs about what reading a hold did.
local function read_gate(base, target)
  local gate = gates[target]
  if gate then return gate end
  local flat = redis.call('HGETALL', gate_key(base, target))
  gate = {}
  for i = 1, #flat, 2 do gate[flat[i]] = flat[i + 1] end
  gates[target] = gate
  return gate
end

-- Drops the copy of a gate this call is about to change by other means than the functions below.
local function forget_gate(target)
  gates[target] = nil
end

-- The bucket's line at time t (a number), uncapped.
local function bucket_line(gate, t)
  return tonumber(gate.tokens) + (t - tonumber(gate.tokensAt)) * tonumber(gate.rate) / 1000
end

-- The bucket's tokens at `now` (a number): the line capped at the burst.
local function bucket_tokens(gate, now)
  return math.min(tonumber(gate.burst) or 1, bucket_line(gate, now))
end

-- The double next to t (> 0), above it (direction 1) or below it (-1).
local function next_double(t, direction)
  local m, e = math.frexp(t)
  if direction < 0 and m == 0.5 then return t - math.ldexp(1, e - 54) end
  return t + direction * math.ldexp(1, e - 53)
end

-- When a rate-limited target out of tokens (fewer than 1 at tokensAt) has its next whole token: the least
-- double t at which the line reaches 1, so a claim at that time finds the token, found from the algebraic
-- answer by stepping over its rounding. nil when the bucket held a whole token at tokensAt.
local function next_token_at(gate)
  local tokens = tonumber(gate.tokens)
  if tokens >= 1 then return nil end
  local t = tonumber(gate.tokensAt) + (1 - tokens) * 1000 / tonumber(gate.rate)
  for _ = 1, 64 do
    if bucket_line(gate, t) >= 1 then break end
    t = next_double(t, 1)
  end
  for _ = 1, 64 do
    local earlier = next_double(t, -1)
    if bucket_line(gate, earlier) < 1 then break end
    t = earlier
  end
  return t
end

-- Whether the target has as many tasks IN_FLIGHT as its in-flight limit allows.
local function at_in_flight_limit(gate)
  return gate.maxInFlight ~= nil and (tonumber(gate.inFlight) or 0) >= tonumber(gate.maxInFlight)
end

-- How many tasks the target's limits let a claim at `now` (a number) take: its whole tokens and its free
-- in-flight slots; math.huge when it has no limit.
local function offer_cap(gate, now)
  local cap = math.huge
  if gate.rate then cap = math.floor(bucket_tokens(gate, now)) end
  if gate.maxInFlight then cap = math.min(cap, tonumber(gate.maxInFlight) - (tonumber(gate.inFlight) or 0)) end
  return math.max(cap, 0)
end

-- Takes `taken` tokens from a rate-limited target's bucket at `now` (text).
local function take_tokens(base, target, gate, taken, now)
  if not gate.rate or taken == 0 then return end
  local left = format_num(bucket_tokens(gate, tonumber(now)) - taken)
  redis.call('HSET', gate_key(base, target), 'tokens', left, 'tokensAt', now)
  gate.tokens, gate.tokensAt = left, now
end

-- The `ready` score of a target whose earliest due time is `due` (text): max(due, hold, next token), as text;
-- nil while the target is at its in-flight limit (not ready until one of its tasks leaves IN_FLIGHT).
local function gate_score(gate, due)
  if at_in_flight_limit(gate) then return nil end
  local score, at = due, tonumber(due)
  if gate.held and tonumber(gate.held) > at then score, at = gate.held, tonumber(gate.held) end
  if gate.rate then
    local token_at = next_token_at(gate)
    if token_at and token_at > at then score = format_num(token_at) end
  end
  return score
end
