-- 010-task-keys-as-numbers: a task's status and target queue as small integers (see docs/stores.md, "What a task
-- costs in each store").
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`. A database made by 009
-- is migrated in place. Cost on an existing database: one copy of `target_queues` and one of `tasks` (every row
-- rewritten once, its six indexes built again), once. The pages freed stay in the file, for new rows, until a
-- `VACUUM`.
--
-- 1. `target_queues` gets a number, `queue_id`, its rowid: the table becomes a rowid table with its key
--    `(tenant_id, target_key)` kept unique by `target_queues_key`. A queue's number never changes and is never given
--    to another queue: no statement deletes a queue (a rolled-back insert gives its number back unused).
-- 2. `tasks.queue_id` replaces `tasks.target_key`: the row keeps its queue's number (1 to 3 bytes) instead of the
--    target's origin (about 20), and `tasks_due` becomes `(queue_id, next_attempt_at)`, an entry of about 16 bytes
--    instead of 45 to 52: a claim walks one queue's stretch of it by number, as it walked it by tenant and key. The
--    store reads the key back through the queue (`TASK_READ_COLUMNS` in task-row.ts; a claim binds the key it claims
--    for), so a task reads as before.
-- 3. `tasks.status` is a number (`STATUS_CODES` in status-guards.ts: PENDING 0, IN_FLIGHT 1, SUCCEEDED 2, FAILED 3,
--    EXHAUSTED 4, CANCELLED 5) instead of its name: a 0 or 1 takes no byte beyond the record header's, a name 7 to 9.
--    The partial indexes' conditions and the CHECKs name the numbers.
--
-- `tasks` is made again rather than altered: a column's type, a CHECK and a column an index names cannot be changed
-- in place. An earlier retryd would write names into `status` (which the new CHECK refuses) and look for
-- `target_key`, so stop every earlier instance before this one opens the file.

CREATE TABLE target_queues_010 (
  queue_id          INTEGER PRIMARY KEY,
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
  -- As 003-target-limits.sql: max() of SQLite is NULL as soon as one argument is: a missing gate is replaced by the
  -- hint, a missing hint leaves the queue not ready.
  ready_at          REAL GENERATED ALWAYS AS (max(
    next_due_at,
    ifnull(held_until, next_due_at),
    ifnull(throttled_until, next_due_at),
    ifnull(full_until, next_due_at)
  )) VIRTUAL,
  CHECK (rate_per_second IS NULL OR (rate_per_second > 0 AND tokens IS NOT NULL AND tokens_at IS NOT NULL)),
  CHECK (burst IS NULL OR burst >= 1),
  CHECK (max_in_flight IS NULL OR max_in_flight >= 1)
) STRICT;

INSERT INTO target_queues_010 (tenant_id, target_key, next_due_at, held_until, hold_changed_at, rate_per_second,
  burst, max_in_flight, limits_changed_at, tokens, tokens_at, throttled_until, full_until)
SELECT tenant_id, target_key, next_due_at, held_until, hold_changed_at, rate_per_second, burst, max_in_flight,
  limits_changed_at, tokens, tokens_at, throttled_until, full_until
FROM target_queues ORDER BY tenant_id, target_key;

-- Every task's queue has a row (inserts create it in the task's own transaction); this one is for a task stored by
-- hand without one, which would otherwise be lost below: its queue is made with the exact hint of its PENDING tasks.
INSERT INTO target_queues_010 (tenant_id, target_key, next_due_at)
SELECT t.tenant_id, t.target_key, min(CASE WHEN t.status = 'PENDING' THEN t.next_attempt_at END) FROM tasks t
WHERE NOT EXISTS (SELECT 1 FROM target_queues q WHERE q.tenant_id = t.tenant_id AND q.target_key = t.target_key)
GROUP BY t.tenant_id, t.target_key ORDER BY t.tenant_id, t.target_key;

DROP TABLE target_queues;
ALTER TABLE target_queues_010 RENAME TO target_queues;
CREATE UNIQUE INDEX target_queues_key ON target_queues (tenant_id, target_key);
CREATE INDEX target_queues_ready ON target_queues (ready_at) WHERE ready_at IS NOT NULL;

CREATE TABLE tasks_010 (
  tenant_id            TEXT    NOT NULL,
  task_id              BLOB    NOT NULL,
  idempotency_key      TEXT    NOT NULL,
  request_hash         BLOB    NOT NULL,
  target_url           TEXT    NOT NULL,
  -- The task's target queue: `target_queues.queue_id`, whose `target_key` is the task's.
  queue_id             INTEGER NOT NULL,
  method               TEXT    NOT NULL,
  headers              TEXT    NOT NULL,
  body                 TEXT,
  body_ref             TEXT,
  policy_id            TEXT,
  policy               TEXT,
  -- STATUS_CODES of status-guards.ts.
  status               INTEGER NOT NULL CHECK (status BETWEEN 0 AND 5),
  attempt_number       INTEGER NOT NULL,
  run_attempt_offset   INTEGER NOT NULL,
  run_started_at       REAL,
  last_delay_ms        REAL    NOT NULL,
  next_attempt_at      REAL,
  created_at           REAL    NOT NULL,
  updated_at           REAL    NOT NULL,
  lease_owner          TEXT,
  lease_expires_at     REAL,
  fencing_token        INTEGER NOT NULL,
  version              INTEGER NOT NULL,
  cancel_requested     INTEGER NOT NULL CHECK (cancel_requested IN (0, 1)),
  last_error           TEXT,
  last_response_status INTEGER,
  dead_letter_reason   TEXT,
  trace_context        TEXT,
  sensitive_body       INTEGER NOT NULL CHECK (sensitive_body IN (0, 1)),
  -- As 001-init.sql: when the task reached a terminal status, NULL while it is live (PENDING or IN_FLIGHT), so
  -- that the listing indexes tell live from ended tasks through a column that claims and retries never write.
  ended_at             REAL,
  -- A PENDING task (0) without a due time would never be claimed, and an IN_FLIGHT one (1) without a lease never
  -- reclaimed: refuse both rather than lose the task silently.
  CHECK (status <> 0 OR next_attempt_at IS NOT NULL),
  CHECK (status <> 1 OR lease_expires_at IS NOT NULL),
  -- A statement that moved a task in or out of the live statuses without `ended_at` would hide it from listings.
  CHECK ((ended_at IS NULL) = (status IN (0, 1)))
) STRICT;

-- In rowid order, so the rows keep their order and the table is written once, front to back.
INSERT INTO tasks_010
SELECT t.tenant_id, t.task_id, t.idempotency_key, t.request_hash, t.target_url, q.queue_id, t.method, t.headers,
  t.body, t.body_ref, t.policy_id, t.policy,
  CASE t.status WHEN 'PENDING' THEN 0 WHEN 'IN_FLIGHT' THEN 1 WHEN 'SUCCEEDED' THEN 2 WHEN 'FAILED' THEN 3
    WHEN 'EXHAUSTED' THEN 4 WHEN 'CANCELLED' THEN 5 END,
  t.attempt_number, t.run_attempt_offset, t.run_started_at, t.last_delay_ms, t.next_attempt_at, t.created_at,
  t.updated_at, t.lease_owner, t.lease_expires_at, t.fencing_token, t.version, t.cancel_requested, t.last_error,
  t.last_response_status, t.dead_letter_reason, t.trace_context, t.sensitive_body, t.ended_at
FROM tasks t JOIN target_queues q ON q.tenant_id = t.tenant_id AND q.target_key = t.target_key
ORDER BY t.rowid;

DROP TABLE tasks;
ALTER TABLE tasks_010 RENAME TO tasks;

-- The indexes of 001, 002, 007 and 008, with the queue's number for the target key and the statuses' numbers.
CREATE UNIQUE INDEX tasks_pk ON tasks (tenant_id, task_id);
CREATE UNIQUE INDEX tasks_idempotency_key ON tasks (tenant_id, idempotency_key);
CREATE INDEX tasks_due ON tasks (queue_id, next_attempt_at) WHERE status = 0;
CREATE INDEX tasks_live ON tasks (tenant_id, created_at, task_id, ended_at) WHERE ended_at IS NULL;
CREATE INDEX tasks_in_flight ON tasks (tenant_id, created_at, task_id, queue_id, lease_expires_at) WHERE status = 1;
CREATE INDEX tasks_ended ON tasks (tenant_id, status, created_at, task_id, ended_at) WHERE ended_at IS NOT NULL;
