-- 001-init: tasks, attempts, policies and per-target state.
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`.
-- Instants (`*_at`) are epoch milliseconds and durations are milliseconds, both REAL: the engine's clock
-- (`performance.timeOrigin + performance.now()`) and the jitter math give fractional values, which a REAL
-- column keeps exactly (a double holds every such value) and indexes in numeric order.
-- JSON columns hold text; booleans are 0/1. Every table is STRICT: a wrongly typed bind (a string for a
-- time, say) fails loudly instead of being stored.

-- A rowid table on purpose: its many secondary indexes then carry an 8-byte rowid, not the 50-byte
-- (tenant_id, task_id) key, and claims update rows found by rowid.
CREATE TABLE tasks (
  tenant_id            TEXT    NOT NULL,
  task_id              TEXT    NOT NULL,
  idempotency_key      TEXT    NOT NULL,
  request_hash         TEXT    NOT NULL,
  target_url           TEXT    NOT NULL,
  method               TEXT    NOT NULL,
  headers              TEXT    NOT NULL,
  body                 TEXT,
  body_ref             TEXT,
  policy_id            TEXT,
  policy               TEXT,
  status               TEXT    NOT NULL
    CHECK (status IN ('PENDING', 'IN_FLIGHT', 'SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED')),
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
  -- When the task reached a terminal status (SUCCEEDED, FAILED, EXHAUSTED, CANCELLED); NULL while it is live
  -- (PENDING or IN_FLIGHT). Not part of the domain's task: it exists so that the listing indexes can tell live
  -- from ended tasks through a column that claims and retries never write (see the indexes below).
  ended_at             REAL,
  -- A PENDING task without a due time would never be claimed, and an IN_FLIGHT one without a lease
  -- never reclaimed: refuse both rather than lose the task silently.
  CHECK (status <> 'PENDING' OR next_attempt_at IS NOT NULL),
  CHECK (status <> 'IN_FLIGHT' OR lease_expires_at IS NOT NULL),
  -- A statement that moved a task in or out of the live statuses without `ended_at` would hide it from listings.
  CHECK ((ended_at IS NULL) = (status IN ('PENDING', 'IN_FLIGHT')))
) STRICT;

CREATE UNIQUE INDEX tasks_pk ON tasks (tenant_id, task_id);
CREATE UNIQUE INDEX tasks_idempotency_key ON tasks (tenant_id, idempotency_key);
-- The scheduler's only way in: due PENDING tasks in due order. Partial, so it holds pending tasks only.
CREATE INDEX tasks_due ON tasks (next_attempt_at) WHERE status = 'PENDING';
-- The lease reaper's way in: IN_FLIGHT tasks by lease expiry.
CREATE INDEX tasks_lease ON tasks (lease_expires_at) WHERE status = 'IN_FLIGHT';
-- Listings, newest first, each walked backwards by a (created_at, task_id) keyset cursor.
--
-- Claims (PENDING -> IN_FLIGHT) and retries (IN_FLIGHT -> PENDING) are the hottest writes, and SQLite rewrites
-- an index entry whenever a column of its key or of its WHERE clause is set. An index keyed on status would move
-- an entry at every claim and every retry; tasks enqueued together share `created_at`, so their entries sit in
-- random-UUID order and each move dirties another page, written to the WAL at every commit. So no listing index
-- holds the status of a live task:
--   tasks_live       PENDING and IN_FLIGHT tasks, through `ended_at IS NULL`, which only the move to a terminal
--                    status (and a replay) writes. A PENDING page filters out the IN_FLIGHT rows: at most the
--                    instances' total concurrency.
--   tasks_in_flight  IN_FLIGHT tasks only. Rewritten by every claim and completion, but as small as the number of
--                    attempts in flight, so its few pages stay hot. Pages IN_FLIGHT tasks without walking the
--                    pending ones (a million in a backlog).
--   tasks_ended      terminal tasks by status (dead letters, cancelled, succeeded): one entry per finished run.
--   tasks_by_policy  by named policy, every status; never rewritten (its columns never change).
-- A listing of several statuses (or of all) merges one ordered walk per index and status (see list-tasks.ts).
-- `ended_at` trails two keys only so that `countByStatus` reads those indexes alone (SQLite must otherwise read
-- the row to check the very condition the partial index guarantees).
CREATE INDEX tasks_live ON tasks (tenant_id, created_at, task_id, ended_at) WHERE ended_at IS NULL;
CREATE INDEX tasks_in_flight ON tasks (tenant_id, created_at, task_id) WHERE status = 'IN_FLIGHT';
CREATE INDEX tasks_ended ON tasks (tenant_id, status, created_at, task_id, ended_at) WHERE ended_at IS NOT NULL;
CREATE INDEX tasks_by_policy ON tasks (tenant_id, policy_id, created_at, task_id) WHERE policy_id IS NOT NULL;

-- The primary key makes a second record of the same attempt impossible.
CREATE TABLE attempts (
  tenant_id             TEXT    NOT NULL,
  task_id               TEXT    NOT NULL,
  attempt_number        INTEGER NOT NULL,
  started_at            REAL    NOT NULL,
  duration_ms           REAL    NOT NULL,
  response_status       INTEGER,
  error_message         TEXT,
  outcome               TEXT    NOT NULL,
  response_body_snippet TEXT,
  next_attempt_at       REAL,
  worker_id             TEXT    NOT NULL,
  PRIMARY KEY (tenant_id, task_id, attempt_number),
  FOREIGN KEY (tenant_id, task_id) REFERENCES tasks (tenant_id, task_id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE TABLE policies (
  tenant_id  TEXT    NOT NULL,
  policy_id  TEXT    NOT NULL,
  policy     TEXT    NOT NULL,
  created_at REAL    NOT NULL,
  updated_at REAL    NOT NULL,
  version    INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, policy_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE target_state (
  tenant_id  TEXT    NOT NULL,
  key        TEXT    NOT NULL,
  value      TEXT    NOT NULL,
  version    INTEGER NOT NULL,
  updated_at REAL    NOT NULL,
  PRIMARY KEY (tenant_id, key)
) STRICT, WITHOUT ROWID;
