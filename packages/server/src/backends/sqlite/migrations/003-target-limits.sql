-- 003-target-limits: a target's rate and concurrency limits, enforced by claims (see `Store.limitTarget`).
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`. A database made by
-- 002 is migrated in place: `target_queues` is rebuilt with the new columns (its rows keep their hint and hold, and
-- start with no limits). Cost: one copy of one row per target, once; `tasks` is not touched. The table is rebuilt
-- rather than altered because its generated `ready_at` folds in the new columns, and a generated column cannot be
-- changed in place (it would have to be dropped and added again around its index, which is no cheaper).
--
-- New columns of `target_queues` (times in epoch ms, as everywhere):
--
--   rate_per_second    The rate limit: tokens the bucket gains per second; NULL: no rate limit.
--   burst              The bucket's size (>= 1), as given; NULL with a rate means a bucket of 1. NULL without a rate.
--   max_in_flight      Most of the target's tasks IN_FLIGHT at once; NULL: no such limit. There is no counter to
--                      keep in step: a claim counts the queue's IN_FLIGHT tasks (few: they are leased) when, and
--                      only when, the queue has this limit and is ready (target-limits.ts).
--   limits_changed_at  When the limits were last set, for the record.
--   tokens, tokens_at  The token bucket: its tokens when last counted, and when. Set exactly when there is a rate
--                      (the CHECK below). A claim brings them up to its `now`, takes one per task, and writes both
--                      back in its IMMEDIATE transaction, so instances sharing the file share one bucket.
--   throttled_until    When the bucket next holds a whole token, while it holds less than one; else NULL (or past).
--                      Written with the tokens: exact, so `nextDueAt` aims at the token's arrival.
--   full_until         Set by a claim that left the queue at its in-flight limit: the earliest lease expiry among
--                      its in-flight tasks (a bound, should every completion be lost: the queue is then counted
--                      again). Every move of one of its tasks out of IN_FLIGHT (a completion, a reaped lease, a
--                      lease handed back) clears it in the same transaction, once per queue per call
--                      (queue-hints.ts). Only ever set for a queue with `max_in_flight`. Kept apart from
--                      `throttled_until` so that a completion frees the in-flight slot without forgetting when the
--                      next token comes.
--
--   ready_at           Generated: the latest of the hint, the hold's end and the two throttles; NULL when the queue
--                      has no PENDING task (a gate alone never makes a queue ready). An unlimited, unheld queue's
--                      ready_at is its hint, as before.
CREATE TABLE target_queues_003 (
  tenant_id         TEXT NOT NULL,
  target_key        TEXT NOT NULL,
  next_due_at       REAL,
  held_until        REAL,
  hold_changed_at   REAL,
  rate_per_second   REAL,
  burst             REAL,
  max_in_flight     INTEGER,
  limits_changed_at REAL,
  tokens            REAL,
  tokens_at         REAL,
  throttled_until   REAL,
  full_until        REAL,
  -- max() of SQLite is NULL as soon as one argument is: a missing gate is replaced by the hint, a missing hint
  -- leaves the queue not ready.
  ready_at          REAL GENERATED ALWAYS AS (max(
    next_due_at,
    ifnull(held_until, next_due_at),
    ifnull(throttled_until, next_due_at),
    ifnull(full_until, next_due_at)
  )) VIRTUAL,
  CHECK (rate_per_second IS NULL OR (rate_per_second > 0 AND tokens IS NOT NULL AND tokens_at IS NOT NULL)),
  CHECK (burst IS NULL OR burst >= 1),
  CHECK (max_in_flight IS NULL OR max_in_flight >= 1),
  PRIMARY KEY (tenant_id, target_key)
) STRICT, WITHOUT ROWID;

INSERT INTO target_queues_003 (tenant_id, target_key, next_due_at, held_until, hold_changed_at)
SELECT tenant_id, target_key, next_due_at, held_until, hold_changed_at FROM target_queues;

-- Drops `target_queues_ready` with the table.
DROP TABLE target_queues;
ALTER TABLE target_queues_003 RENAME TO target_queues;

-- As in 002: claims find ready queues here (`ready_at <= now`), `nextDueAt` reads it in order. A held or throttled
-- queue's entry lies past now, so neither claims nor the timer look at it before its gate opens.
CREATE INDEX target_queues_ready ON target_queues (ready_at) WHERE ready_at IS NOT NULL;
