-- 001-init: tasks, attempts, policies and per-target state.
--
-- Applied once by `migrate.ts`, in the transaction that holds the schema's migration lock, and recorded in
-- `schema_migrations`. Every name is unqualified: each connection's search_path is the store's schema.
--
-- Instants (`*_at`) are epoch milliseconds and durations milliseconds, both double precision: the engine's
-- clock (`performance.timeOrigin + performance.now()`) and the jitter math give fractional values, which a
-- double keeps exactly. Keys are COLLATE "C" so that ordering (listings, keyset cursors) is byte order, the
-- same as JavaScript's string comparison, whatever the database's default collation.

CREATE TABLE tasks (
  tenant_id            text COLLATE "C" NOT NULL,
  task_id              text COLLATE "C" NOT NULL,
  idempotency_key      text COLLATE "C" NOT NULL,
  request_hash         text             NOT NULL,
  target_url           text             NOT NULL,
  method               text             NOT NULL,
  headers              jsonb            NOT NULL,
  -- The body as a JSON string, not text: a body sent as is may hold U+0000, which text cannot store and
  -- json keeps as its escape.
  body                 json,
  body_ref             text,
  policy_id            text COLLATE "C",
  policy               jsonb,
  status               text COLLATE "C" NOT NULL
    CHECK (status IN ('PENDING', 'IN_FLIGHT', 'SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED')),
  attempt_number       integer          NOT NULL,
  run_attempt_offset   integer          NOT NULL,
  run_started_at       double precision,
  last_delay_ms        double precision NOT NULL,
  next_attempt_at      double precision,
  created_at           double precision NOT NULL,
  updated_at           double precision NOT NULL,
  lease_owner          text,
  lease_expires_at     double precision,
  fencing_token        bigint           NOT NULL,
  version              bigint           NOT NULL,
  cancel_requested     boolean          NOT NULL,
  last_error           text,
  last_response_status integer,
  dead_letter_reason   text,
  trace_context        text,
  PRIMARY KEY (tenant_id, task_id),
  -- A PENDING task without a due time would never be claimed, and an IN_FLIGHT one without a lease never
  -- reclaimed: refuse both rather than lose the task silently.
  CHECK (status <> 'PENDING' OR next_attempt_at IS NOT NULL),
  CHECK (status <> 'IN_FLIGHT' OR lease_expires_at IS NOT NULL)
) WITH (
  -- Every claim and completion rewrites a row; vacuum early so the due index does not fill with dead entries
  -- that each claim must step over (the default waits for 20% of the table to be dead).
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.02
);

CREATE UNIQUE INDEX tasks_idempotency_key ON tasks (tenant_id, idempotency_key);
-- The scheduler's only way in: due PENDING tasks in due order. Partial, so it holds pending tasks only and a
-- claim reads its first `limit` entries (`FOR UPDATE SKIP LOCKED` steps over rows another claim holds).
CREATE INDEX tasks_due ON tasks (next_attempt_at) WHERE status = 'PENDING';
-- The lease reaper's way in: IN_FLIGHT tasks by lease expiry.
CREATE INDEX tasks_lease ON tasks (lease_expires_at) WHERE status = 'IN_FLIGHT';
-- Listings, newest first, each walked backwards by a (created_at, task_id) keyset cursor. A listing of every
-- status walks each status's stretch of `tasks_by_status` and merges them (list-tasks-by-status.sql), so no
-- index on (tenant_id, created_at) is kept: every claim and completion rewrites the row and adds an entry to
-- each index (the state columns are indexed, so no update is HOT), and that upkeep, not the lookups, is what
-- bounds the attempts per second. `tasks_by_status` also serves countByStatus.
CREATE INDEX tasks_by_status ON tasks (tenant_id, status, created_at, task_id);
CREATE INDEX tasks_by_policy ON tasks (tenant_id, policy_id, created_at, task_id) WHERE policy_id IS NOT NULL;

-- The primary key makes a second record of the same attempt impossible.
CREATE TABLE attempts (
  tenant_id             text COLLATE "C" NOT NULL,
  task_id               text COLLATE "C" NOT NULL,
  attempt_number        integer          NOT NULL,
  started_at            double precision NOT NULL,
  duration_ms           double precision NOT NULL,
  response_status       integer,
  error_message         text,
  outcome               text             NOT NULL,
  response_body_snippet text,
  next_attempt_at       double precision,
  worker_id             text             NOT NULL,
  PRIMARY KEY (tenant_id, task_id, attempt_number),
  FOREIGN KEY (tenant_id, task_id) REFERENCES tasks (tenant_id, task_id) ON DELETE CASCADE
);

CREATE TABLE policies (
  tenant_id  text COLLATE "C" NOT NULL,
  policy_id  text COLLATE "C" NOT NULL,
  policy     jsonb            NOT NULL,
  created_at double precision NOT NULL,
  updated_at double precision NOT NULL,
  version    bigint           NOT NULL,
  PRIMARY KEY (tenant_id, policy_id)
);

-- Opaque values (breaker snapshots, rate limits) kept as the exact text the engine wrote.
CREATE TABLE target_state (
  tenant_id  text COLLATE "C" NOT NULL,
  key        text COLLATE "C" NOT NULL,
  value      text             NOT NULL,
  version    bigint           NOT NULL,
  updated_at double precision NOT NULL,
  PRIMARY KEY (tenant_id, key)
);
