-- 004-target-limits: a rate limit (a token bucket) and a concurrency limit per target queue, enforced by claims across
-- every instance, and the throttle they put on a queue.
--
-- Applied in place to a store made by 001 to 003: existing queues get no limits (NULL), and so claim as before. See
-- the store port (`store/store.ts`, `limitTarget`) for what the limits mean, and claim-due.sql for how a claim spends
-- them.
--
-- The bucket is kept as the tokens it held at `tokens_at` (a claim's `now`): it is refilled lazily, by whoever reads
-- it next (bucket_tokens below), never by a timer. Only the statements that hold the queue row's lock write it: a
-- claim of a limited queue locks the row, waiting (FOR UPDATE, not SKIP LOCKED), before it counts (target_rooms
-- below), so two instances cannot spend the same tokens or the same in-flight slot.
--
-- `throttled_until` is folded into `ready_at` beside the hint and the hold, so a throttled queue drops out of
-- target_queues_ready and costs claims nothing, like a held one. Written by:
--
-- - a claim of a limited queue: when its bucket holds less than a whole token, the time the next one arrives; when
--   the queue is at its in-flight limit, its earliest lease expiry still to come (an attempt ends by then, or its
--   lease lapses and the reaper's completion ends it); the later of the two, or NULL.
-- - every statement that takes a task of a queue with an in-flight limit out of IN_FLIGHT (complete-attempts, and so
--   the reaper; release-leases): a slot is free, so the throttle drops back to the bucket's part alone. Queues without
--   an in-flight limit are not touched for it.
-- - limit-target: the new bucket's part alone (the next claim recounts the slots).
--
-- Like the hint, the throttle may be early (a claim that finds no room recomputes it). Late, a queue would wait for
-- nothing: the bucket's part is exact, and the in-flight part ends with the first attempt to end, or at worst at the
-- earliest lease expiry (a completion that read the queue before its limit was set leaves the throttle in place). The
-- rule of 003-targets.sql for the hint and its version is unchanged: none of the writes above raises the version
-- unless it also makes a task PENDING.

ALTER TABLE target_queues
  -- What `limitTarget` set; NULL: no such limit. A burst without a rate means nothing; a rate without a burst has a
  -- bucket of one token.
  ADD COLUMN rate_per_second double precision CHECK (rate_per_second > 0),
  ADD COLUMN burst           double precision CHECK (burst >= 1),
  ADD COLUMN max_in_flight   integer          CHECK (max_in_flight >= 0),
  -- The bucket: `tokens` as counted at `tokens_at`, both NULL without a rate limit.
  ADD COLUMN tokens          double precision,
  ADD COLUMN tokens_at       double precision,
  ADD COLUMN throttled_until double precision;

-- `ready_at` gains the throttle. A generated column's expression cannot be altered before PostgreSQL 17: it is
-- dropped (with target_queues_ready) and added again, which recomputes it for every existing row.
ALTER TABLE target_queues DROP COLUMN ready_at;
ALTER TABLE target_queues ADD COLUMN ready_at double precision GENERATED ALWAYS AS (
  CASE WHEN next_due_at IS NOT NULL THEN greatest(next_due_at, held_until, throttled_until) END) STORED;
CREATE INDEX target_queues_ready ON target_queues (ready_at);

-- When a bucket that held `tokens` at `tokens_at` next holds a whole token; NULL when it holds one already, or
-- without a rate. The bucket's part of `throttled_until`.
CREATE FUNCTION bucket_refill_at(tokens double precision, tokens_at double precision, rate_per_second double precision)
  RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN tokens < 1 THEN tokens_at + (1 - tokens) * 1000 / rate_per_second END;

-- The bucket's tokens at `now` (epoch ms): refilled at `rate_per_second` since `tokens_at`, capped at the burst.
-- Computed in this order (elapsed ms times the rate, then / 1000) so that 100 ms at 10/s is exactly one token. A
-- bucket read at or after the time bucket_refill_at announced holds at least a whole token, whatever the rounding of
-- `now - tokens_at`: a claim at the announced time finds the token, instead of a few ulps too few and a throttle of
-- a few ulps more. An instance whose clock is behind the one that counted last gains nothing and loses nothing (its
-- writers keep `tokens_at` at the later of the two, so no time is credited twice). NULL without a rate. Inlined by the
-- planner (an IMMUTABLE SQL expression).
CREATE FUNCTION bucket_tokens(tokens double precision, tokens_at double precision, rate_per_second double precision,
                              burst double precision, now double precision)
  RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE
  -- `least` and `greatest` skip NULLs: without the CASE, no rate would read as a bucket of one token.
  RETURN CASE WHEN rate_per_second IS NOT NULL THEN least(coalesce(burst, 1), greatest(
    tokens + greatest(now - tokens_at, 0) * rate_per_second / 1000,
    CASE WHEN now >= bucket_refill_at(tokens, tokens_at, rate_per_second) THEN 1 END)) END;

-- The limited queues a claim is about to serve, locked and measured: called by claim-due.sql with the queues it
-- considered that have a limit (`queues`: a JSON array of {tenant_id, target_key}), and not at all without one
-- (STRICT: the claim passes NULL). Returns, for each of them still ready once locked, its newest row's version and
-- limits, its bucket's tokens at `now` and the time they are counted at (`now`, or the last count if later), its
-- tasks IN_FLIGHT (hand-offs included) and the earliest of their leases that lapses after `now` (with an in-flight
-- limit), and its room: the whole tokens and free slots, the lesser (NULL: no limit left).
--
-- A function, not a part of the claim statement, for two reasons:
--
-- - The count must see every claim that held these rows before this one. The first statement below locks the rows
--   in key order, WAITING for a claim that holds one (never SKIP LOCKED: two claims must not spend the same tokens or
--   the same slot; key order: claims whose rings start at different queues cannot deadlock). In READ COMMITTED each
--   statement of a VOLATILE function takes a fresh snapshot, so the second one, which reads the rows and counts, sees
--   what those claims committed, their tasks IN_FLIGHT included. The claim statement's own snapshot, taken before it
--   waited, still shows those tasks PENDING: counted there, two instances would fill the same slots.
-- - A claim that meets no limited queue plans and starts none of this: the unlimited path stays as cheap as before.
--
-- The in-flight tasks are counted in one pass over the IN_FLIGHT tasks of the tenants named, however many queues
-- (the status is written out as in the index predicates of 001-init.sql); they are few.
CREATE FUNCTION target_rooms(queues jsonb, now double precision)
  RETURNS TABLE (tenant_id text, target_key text, version bigint, rate_per_second double precision,
                 max_in_flight integer, tokens double precision, tokens_at double precision, in_flight bigint,
                 next_lease_expiry double precision, room bigint)
  LANGUAGE sql VOLATILE STRICT
BEGIN ATOMIC
  -- Byte order (COLLATE "C"), the order of every statement that locks several queue rows.
  SELECT
  FROM (SELECT * FROM jsonb_to_recordset(target_rooms.queues) AS k (tenant_id text, target_key text)
        ORDER BY k.tenant_id COLLATE "C", k.target_key COLLATE "C") AS k
  CROSS JOIN LATERAL (
    SELECT FROM target_queues AS q WHERE q.tenant_id = k.tenant_id AND q.target_key = k.target_key FOR UPDATE) AS l;
  SELECT q.tenant_id, q.target_key, q.version, q.rate_per_second, q.max_in_flight, b.tokens,
    CASE WHEN b.tokens IS NOT NULL THEN greatest(q.tokens_at, target_rooms.now) END,
    CASE WHEN q.max_in_flight IS NOT NULL THEN coalesce(f.n, 0) END, f.next_lease_expiry,
    CASE WHEN q.rate_per_second IS NOT NULL OR q.max_in_flight IS NOT NULL
      THEN greatest(0, least(floor(b.tokens), q.max_in_flight - coalesce(f.n, 0)))::bigint
    END
  FROM jsonb_to_recordset(target_rooms.queues) AS k (tenant_id text, target_key text)
  -- OFFSET 0: one primary-key lookup per queue named, never a walk of every queue.
  CROSS JOIN LATERAL (
    SELECT * FROM target_queues AS q WHERE q.tenant_id = k.tenant_id AND q.target_key = k.target_key OFFSET 0) AS q
  CROSS JOIN LATERAL (
    SELECT bucket_tokens(q.tokens, q.tokens_at, q.rate_per_second, q.burst, target_rooms.now) AS tokens) AS b
  LEFT JOIN (
    SELECT t.tenant_id, t.target_key, count(*) AS n,
      min(t.lease_expires_at) FILTER (WHERE t.lease_expires_at > target_rooms.now) AS next_lease_expiry
    FROM tasks AS t
    -- Pairs of a tenant and another tenant's key count too, for no queue of theirs: the join below drops them.
    WHERE t.status = 'IN_FLIGHT'
      AND t.tenant_id = ANY (ARRAY(SELECT k.tenant_id FROM jsonb_to_recordset(target_rooms.queues) AS k (tenant_id text)))
      AND t.target_key = ANY (ARRAY(SELECT k.target_key FROM jsonb_to_recordset(target_rooms.queues) AS k (target_key text)))
    GROUP BY t.tenant_id, t.target_key
  ) AS f ON f.tenant_id = q.tenant_id AND f.target_key = q.target_key AND q.max_in_flight IS NOT NULL
  -- A claim that held a row while this one waited may have throttled or drained it.
  WHERE q.ready_at <= target_rooms.now;
END;
