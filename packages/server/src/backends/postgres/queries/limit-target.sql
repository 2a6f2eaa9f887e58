-- limit-target: sets a target queue's rate limit (a token bucket) and in-flight limit; NULL is no such limit.
--
-- The bucket keeps its tokens: refilled up to now under the old limits, then capped at the new burst (a burst
-- without a value is one token); a queue that had no rate limit starts with a full bucket. Its throttle becomes the
-- new bucket's part alone (the next claim of the queue counts its in-flight slots again and throttles it if it is
-- still at its limit). Computed in the upsert from the row as the last writer left it (never from this statement's
-- snapshot), so that tokens a concurrent claim spent are not handed back. An unknown target becomes known. See
-- 004-target-limits.sql.
--
-- args:    $1 text: tenant id; $2 text: target key; $3 float8: rate per second, or null; $4 float8: burst, or
--          null; $5 integer: most tasks in flight, or null; $6 float8: now; $7 text: the wake-up channel
-- results: none
-- effects: `NOTIFY` on $7 when the change made a queue with a due task ready now that was not (instances asleep
--          until its throttle's end look now), delivered at commit.
-- errors:  23514 (check_violation) on a rate <= 0, a burst < 1 or an in-flight limit < 0
WITH before AS (
  -- Only to tell whether to wake the others; a concurrent change at worst wakes them for nothing or not at all.
  SELECT ready_at FROM target_queues WHERE tenant_id = $1::text AND target_key = $2::text
),
limited AS (
  INSERT INTO target_queues AS q (tenant_id, target_key, rate_per_second, burst, max_in_flight, tokens, tokens_at)
  VALUES ($1::text, $2::text, $3::float8, $4::float8, $5::integer,
    -- A new bucket: full, counted now.
    CASE WHEN $3::float8 IS NOT NULL THEN coalesce($4::float8, 1) END,
    CASE WHEN $3::float8 IS NOT NULL THEN $6::float8 END)
  ON CONFLICT (tenant_id, target_key) DO UPDATE SET
    rate_per_second = excluded.rate_per_second,
    burst = excluded.burst,
    max_in_flight = excluded.max_in_flight,
    (tokens, tokens_at, throttled_until) = (
      SELECT b.tokens, b.tokens_at, bucket_refill_at(b.tokens, b.tokens_at, excluded.rate_per_second)
      FROM (
        SELECT
          CASE WHEN excluded.rate_per_second IS NULL OR q.rate_per_second IS NULL THEN excluded.tokens
            -- `excluded.tokens` is the new burst: the old bucket as of now, capped at it.
            ELSE least(excluded.tokens, bucket_tokens(q.tokens, q.tokens_at, q.rate_per_second, q.burst, $6::float8))
          END AS tokens,
          CASE WHEN excluded.rate_per_second IS NULL OR q.rate_per_second IS NULL THEN excluded.tokens_at
            ELSE greatest(q.tokens_at, $6::float8)
          END AS tokens_at
      ) AS b)
  RETURNING ready_at
),
woken AS (
  SELECT count(pg_notify($7::text, '')) AS notified
  FROM limited
  WHERE limited.ready_at <= $6::float8 AND NOT EXISTS (SELECT FROM before WHERE before.ready_at <= $6::float8)
)
SELECT notified FROM woken
