-- 011-task-queue-number: a task row names its target queue by the queue's number, and the row's columns are laid out
-- without padding (see docs/stores.md, "What a task costs in each store").
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`. A database made by 010
-- is migrated in place. Cost on an existing database: one copy of `tasks` and a build of its indexes, under an
-- ACCESS EXCLUSIVE lock for its duration, once. Stop every instance of an earlier retryd first: it writes
-- `target_key` into `tasks`, which no longer has it.
--
-- Every target queue gets a number, `queue_id`, given by an identity sequence: never changed, never given to another
-- queue (no statement deletes a queue). A task row keeps its queue's number (8 bytes) instead of the target key (the
-- URL's origin, 21 bytes for `https://api.example.com`), and `tasks_due` becomes `(queue_id, next_attempt_at)`: an
-- entry of 16 key bytes instead of the tenant, the key and the time. Statements read the key back through the number
-- (one look-up of `target_queues_id`), and write a queue's hint, version and throttle by its key as before, in key
-- order (003-targets.sql): the lock order of every statement is unchanged.
--
-- The new table's columns are in the order that leaves no padding: the 8-byte values, the uuid, the 4-byte ones, the
-- booleans, then the variable-length ones (which a short value stores unaligned). Before, 8 columns of 8 bytes
-- followed text and 4-byte columns, each aligned at a cost of up to 7 bytes. A small task's tuple is then about 307
-- bytes (about 324 before), and a heap page holds 25 or 26 of them (24 or 25 before).

ALTER TABLE target_queues ADD COLUMN queue_id bigint GENERATED ALWAYS AS IDENTITY;
CREATE UNIQUE INDEX target_queues_id ON target_queues (queue_id);

-- A task whose target has no queue row (none is expected: every statement that writes a task writes its queue) gets
-- one, with the exact hint of its PENDING tasks, rather than be lost by the join below.
INSERT INTO target_queues (tenant_id, target_key, next_due_at)
SELECT t.tenant_id, t.target_key, min(t.next_attempt_at) FILTER (WHERE t.status = 'PENDING')
FROM tasks AS t
WHERE NOT EXISTS (SELECT FROM target_queues AS q WHERE q.tenant_id = t.tenant_id AND q.target_key = t.target_key)
GROUP BY t.tenant_id, t.target_key;

-- target_rooms reads `tasks`; it is made again below, over queue numbers.
DROP FUNCTION target_rooms(jsonb, double precision);

ALTER TABLE tasks RENAME TO tasks_010;
ALTER TABLE tasks_010 DROP CONSTRAINT tasks_pkey;
DROP INDEX tasks_idempotency_key, tasks_due, tasks_lease, tasks_by_status;

CREATE TABLE tasks (
  queue_id             bigint           NOT NULL,
  fencing_token        bigint           NOT NULL,
  version              bigint           NOT NULL,
  created_at           double precision NOT NULL,
  updated_at           double precision NOT NULL,
  last_delay_ms        double precision NOT NULL,
  next_attempt_at      double precision,
  run_started_at       double precision,
  lease_expires_at     double precision,
  task_id              uuid             NOT NULL,
  attempt_number       integer          NOT NULL,
  run_attempt_offset   integer          NOT NULL,
  last_response_status integer,
  cancel_requested     boolean          NOT NULL,
  sensitive_body       boolean          NOT NULL DEFAULT false,
  tenant_id            text COLLATE "C" NOT NULL,
  status               text COLLATE "C" NOT NULL
    CHECK (status IN ('PENDING', 'IN_FLIGHT', 'SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED')),
  idempotency_key      text COLLATE "C" NOT NULL,
  request_hash         bytea            NOT NULL,
  target_url           text             NOT NULL,
  method               text             NOT NULL,
  headers              json             NOT NULL,
  body                 bytea,
  body_ref             text,
  policy_id            text COLLATE "C",
  policy               json,
  lease_owner          text,
  last_error           text,
  dead_letter_reason   text,
  trace_context        text,
  -- As in 001-init.sql: a PENDING task without a due time would never be claimed, an IN_FLIGHT one without a lease
  -- never reclaimed.
  CHECK (status <> 'PENDING' OR next_attempt_at IS NOT NULL),
  CHECK (status <> 'IN_FLIGHT' OR lease_expires_at IS NOT NULL)
) WITH (
  -- As in 001-init.sql: vacuum early, so the due index does not fill with dead entries that each claim steps over.
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.02
);

INSERT INTO tasks (
  queue_id, fencing_token, version, created_at, updated_at, last_delay_ms, next_attempt_at, run_started_at,
  lease_expires_at, task_id, attempt_number, run_attempt_offset, last_response_status, cancel_requested,
  sensitive_body, tenant_id, status, idempotency_key, request_hash, target_url, method, headers, body, body_ref,
  policy_id, policy, lease_owner, last_error, dead_letter_reason, trace_context)
SELECT
  q.queue_id, t.fencing_token, t.version, t.created_at, t.updated_at, t.last_delay_ms, t.next_attempt_at,
  t.run_started_at, t.lease_expires_at, t.task_id, t.attempt_number, t.run_attempt_offset, t.last_response_status,
  t.cancel_requested, t.sensitive_body, t.tenant_id, t.status, t.idempotency_key, t.request_hash, t.target_url,
  t.method, t.headers, t.body, t.body_ref, t.policy_id, t.policy, t.lease_owner, t.last_error, t.dead_letter_reason,
  t.trace_context
FROM tasks_010 AS t
JOIN target_queues AS q ON q.tenant_id = t.tenant_id AND q.target_key = t.target_key;

DROP TABLE tasks_010;

ALTER TABLE tasks ADD PRIMARY KEY (tenant_id, task_id);
CREATE UNIQUE INDEX tasks_idempotency_key ON tasks (tenant_id, idempotency_key);
-- A claim's only way in, one target queue's stretch at a time (003-targets.sql), now by the queue's number.
CREATE INDEX tasks_due ON tasks (queue_id, next_attempt_at) WHERE status = 'PENDING';
CREATE INDEX tasks_lease ON tasks (lease_expires_at) WHERE status = 'IN_FLIGHT';
CREATE INDEX tasks_by_status ON tasks (tenant_id, status, created_at, task_id);

-- As in 004-target-limits.sql (which says why it is a function, and how it locks and counts), over queue numbers:
-- `queues` holds the numbers of the limited queues a claim considered. Rows are locked in key order (the order of
-- every statement that locks several queue rows); the numbers are looked up first, unlocked (a queue's key and
-- number never change).
CREATE FUNCTION target_rooms(queues bigint[], now double precision)
  RETURNS TABLE (queue_id bigint, version bigint, rate_per_second double precision, max_in_flight integer,
                 tokens double precision, tokens_at double precision, in_flight bigint,
                 next_lease_expiry double precision, room bigint)
  LANGUAGE sql VOLATILE STRICT
BEGIN ATOMIC
  SELECT
  FROM (SELECT k.queue_id FROM target_queues AS k WHERE k.queue_id = ANY (target_rooms.queues)
        ORDER BY k.tenant_id, k.target_key) AS k
  CROSS JOIN LATERAL (SELECT FROM target_queues AS q WHERE q.queue_id = k.queue_id FOR UPDATE) AS l;
  SELECT q.queue_id, q.version, q.rate_per_second, q.max_in_flight, b.tokens,
    CASE WHEN b.tokens IS NOT NULL THEN greatest(q.tokens_at, target_rooms.now) END,
    CASE WHEN q.max_in_flight IS NOT NULL THEN coalesce(f.n, 0) END, f.next_lease_expiry,
    CASE WHEN q.rate_per_second IS NOT NULL OR q.max_in_flight IS NOT NULL
      THEN greatest(0, least(floor(b.tokens), q.max_in_flight - coalesce(f.n, 0)))::bigint
    END
  FROM unnest(target_rooms.queues) AS k (queue_id)
  -- OFFSET 0: one look-up per queue named, never a walk of every queue.
  CROSS JOIN LATERAL (SELECT * FROM target_queues AS q WHERE q.queue_id = k.queue_id OFFSET 0) AS q
  CROSS JOIN LATERAL (
    SELECT bucket_tokens(q.tokens, q.tokens_at, q.rate_per_second, q.burst, target_rooms.now) AS tokens) AS b
  LEFT JOIN (
    SELECT t.queue_id, count(*) AS n,
      min(t.lease_expires_at) FILTER (WHERE t.lease_expires_at > target_rooms.now) AS next_lease_expiry
    FROM tasks AS t
    -- The IN_FLIGHT stretches of tasks_by_status of the queues' tenants (few rows), then the queues named.
    WHERE t.status = 'IN_FLIGHT'
      AND t.tenant_id = ANY (ARRAY(
        SELECT k.tenant_id FROM target_queues AS k WHERE k.queue_id = ANY (target_rooms.queues)))
      AND t.queue_id = ANY (target_rooms.queues)
    GROUP BY t.queue_id
  ) AS f ON f.queue_id = q.queue_id AND q.max_in_flight IS NOT NULL
  -- A claim that held a row while this one waited may have throttled or drained it.
  WHERE q.ready_at <= target_rooms.now;
END;
