-- 003-targets: every task's target (the origin of its URL) as a key, and the target queues that claims walk.
--
-- Applied in place to a store made by 001 and 002: existing tasks get their target from their URL, and a queue row
-- for every target they name. See the store port (`store/store.ts`) for what targets, queues and holds are.

ALTER TABLE tasks ADD COLUMN target_key text COLLATE "C";
-- `target_url` is stored as a WHATWG href without userinfo, which already writes the scheme and the host lower-case
-- and leaves the scheme's default port out: its origin (what `targetKeyOf` returns) is its text up to the path.
UPDATE tasks SET target_key = substring(target_url FROM '^[a-z][a-z0-9+.-]*://[^/?#]*');
ALTER TABLE tasks ALTER COLUMN target_key SET NOT NULL;

-- The scheduler's way in, now per target queue: a claim reads the first entries of each ready queue's stretch, and
-- never enters the stretch of a queue that is not ready, however long it is.
DROP INDEX tasks_due;
CREATE INDEX tasks_due ON tasks (tenant_id, target_key, next_attempt_at) WHERE status = 'PENDING';

-- One row per (tenant, target) ever seen: rows are made by the statements that insert tasks or make them due, and by
-- a hold, and never deleted. A claim finds the ready queues here, through target_queues_ready, without reading tasks.
--
-- `next_due_at` is a hint: a time at or before the earliest due time of the queue's PENDING tasks, or NULL when it
-- has none. It may be early (a claim that finds nothing then corrects it), never late, since a late hint would leave
-- a due task unclaimed. The rule that keeps it so, with any number of instances in READ COMMITTED:
--
-- - Every statement that makes a task PENDING (insert-tasks, complete-attempts, release-leases, replay-task) upserts
--   the row with `next_due_at = least(next_due_at, due)` AND `version = version + 1`, always, even when the hint is
--   already earlier. The hint can then only be raised by a claim, and a claim computes the new value from the
--   tasks in its statement's snapshot: a task made PENDING by a statement that committed after that snapshot is not
--   in it. The version bump is what makes such a claim notice: its refresh applies only `WHERE version = <the
--   version it read>`, and READ COMMITTED re-checks that condition on the newest row version (EvalPlanQual), so a
--   refresh computed from a snapshot older than the bump is dropped. Without the bump, a refresh could overwrite a
--   hint that already covered the new task with a value past it. A hint that is already early needs no refresh:
--   the bump alone is the point.
-- - Claims' refreshes never bump (they only move the hint to what their snapshot shows, never past a task in it),
--   and skip a row another statement holds (`SKIP LOCKED`): its holder is about to change the hint or its version.
-- - A hold sets `held_until` only; it never touches the hint.
-- - Tasks inserted already leased (the hand-off) are not PENDING: their queue's row is made if missing, not bumped.
--
-- Statements that write several queue rows write them in (tenant_id, target_key) order, after their task rows:
-- concurrent statements then lock queue rows in one order and cannot deadlock on them.
CREATE TABLE target_queues (
  tenant_id   text COLLATE "C" NOT NULL,
  target_key  text COLLATE "C" NOT NULL,
  next_due_at double precision,
  -- Claims skip the queue until then (a breaker or a rate limit holding the target).
  held_until  double precision,
  -- Raised by every statement that makes one of the queue's tasks PENDING; see above.
  version     bigint           NOT NULL DEFAULT 0,
  -- When the queue is next ready: its hint, or its hold's end if later; NULL while it has no PENDING task (a hold
  -- on an empty queue must not make it look ready at the hold's end, as `greatest` alone would: it skips NULLs).
  ready_at    double precision GENERATED ALWAYS AS (
                CASE WHEN next_due_at IS NOT NULL THEN greatest(next_due_at, held_until) END) STORED,
  PRIMARY KEY (tenant_id, target_key)
) WITH (
  -- A busy target's row is rewritten by most statements: room on the page keeps those updates HOT when ready_at
  -- does not change, and an early vacuum keeps target_queues_ready free of dead entries (TaskVacuum runs one too).
  fillfactor = 50,
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 1000
);
-- The ready queues (ready_at <= now) for claims, and the earliest ready_at for `nextDueAt`.
CREATE INDEX target_queues_ready ON target_queues (ready_at);

INSERT INTO target_queues (tenant_id, target_key, next_due_at)
SELECT tenant_id, target_key, min(next_attempt_at) FILTER (WHERE status = 'PENDING')
FROM tasks
GROUP BY tenant_id, target_key;
