-- insert-tasks: inserts a batch of new tasks in one statement, keeps their target queues, and wakes idle instances.
--
-- args:    $1 jsonb: an array with one array per task of the fields the batch's tasks do not all share, in row order
--             (`JSONB_FIELDS` of insert-records.ts, at the places $9 gives; a json column as its value's place in $3, a
--             `hex` or `uuid` one as its text);
--          $2 json: an array with one array per task, in the same order, of its body as the base64 of its UTF-8
--             bytes, or null (`JSON_TEXT_FIELDS`): kept as json, not jsonb, whose values hold at most 256 MB;
--          $3 jsonb: an array of the JSON texts of the batch's json columns (headers, policies), each value the
--             tasks share written once, read by place (from 0);
--          $4 integer: the number of tasks in the batch;
--          $5 text[], $6 text[]: the batch's distinct target queues, as tenant ids and target keys by place;
--          $7 text: the wake-up channel (`retryd_due_<schema>`);
--          $8 jsonb: the batch's shared record: every field of `JSONB_FIELDS` by its place (from 0), as $1 would hold
--             it, for a field every task holds alike; null for the others;
--          $9 integer[]: for each field of `JSONB_FIELDS` (from 1), its place in the tasks' arrays of $1 (from 0), or
--             null for a field of $8 (`packedRecords` of insert-records.ts)
--          $10 boolean: commit without waiting for the WAL flush (`synchronous_commit` off for this transaction
--             alone): the service's hand-off, whose attempt starts once the tasks are visible and whose enqueue is
--             acknowledged only after flush-wal.sql; false in an application's own transaction, whose commit is its own
--          A task's index `i` is its place in the arrays (from 1).
-- results: one row: `inserted`, how many tasks were inserted; when fewer than $4, `tenant_ids` and `task_ids`, the
--          keys of those inserted (in no particular order; NULL for none), else NULL: a batch wholly inserted, the
--          common case, is told in one value instead of a row per task. A task whose (tenant_id, idempotency_key) is
--          already stored, by an earlier call or earlier in the same batch (lower `i`), is skipped: `ON CONFLICT ... DO
--          NOTHING` waits for a concurrent insert of the same key to end, so exactly one of them inserts.
--          `queue_missing`: true when a task names a target queue that does not exist yet; then nothing was written,
--          and the caller makes the queues (add-target-queues.sql) and calls again. `async_commit`: 'off' when $10
--          made this transaction's commit skip the WAL flush, else NULL (when nothing was inserted, the commit may
--          wait for the flush whatever $10 says).
-- effects: a queue given a PENDING task has its hint lowered to that task's due time if later (`least`) and its
--          version raised, always (the rule of 003-targets.sql: a claim's refresh from an older snapshot must not raise
--          the hint past this task). A queue given only tasks already leased (the hand-off) is left alone: no row
--          lock, so hand-offs to one target do not queue behind each other. `NOTIFY` on $7 when a PENDING task was
--          inserted, delivered at commit, its payload the earliest due time of the batch's PENDING tasks (epoch ms,
--          digits): an engine told of tasks due later aims its timer rather than claiming at once. One per statement
--          (PostgreSQL folds only notifications of equal payloads within a transaction).
-- errors:  23505 on tasks_pkey when a task id is reused under another idempotency key (a caller bug).
--
-- The tasks are read by place from positional arrays rather than as named records (`json_to_recordset`), which the
-- server reads in half the time: each column is found by its index instead of every record's keys being hashed.
--
-- A task row keeps its queue's number (011-task-queue-number.sql), looked up once per distinct queue of the batch.
-- The queues are not made here: a queue made in this statement would be locked while its tasks are inserted, and a
-- task insert may wait on a concurrent one (a key conflict), which could wait on that queue; and a queue another
-- instance made after this statement's snapshot could not be seen. Made by their own statement first, they are
-- committed, and a queue row is never deleted, so a number read is never stale.
--
-- The queue rows are written from the grouped RETURNING of the task insert, so every task row is inserted before
-- any queue row is locked (a key conflict waits on another insert while holding no queue row), and in key order.
WITH input AS (
  SELECT r.i, {{task_record_values}}
  -- `json_values` (and `places`) is an uncorrelated subquery, read once (an InitPlan), not `$3` cast to jsonb again
  -- for every task; a MATERIALIZED CTE instead cost the reading of the batch a tenth more. So is each shared field of
  -- `$8`, cast to its column's type once (`shared_<place>`): read and cast for every task, the 28 fields a W6 batch
  -- shares were a third of the reading of the batch (3.7–4.2 against 2.5–2.8 ms for 1,000 tasks).
  FROM (SELECT (SELECT $3::jsonb) AS json_values, (SELECT $9::integer[]) AS places{{task_shared_values}}) AS shared,
    ROWS FROM (jsonb_array_elements($1::jsonb), json_array_elements($2::json)) WITH ORDINALITY AS r(task, texts, i)
),
numbers AS MATERIALIZED (
  SELECT k.tenant_id, k.target_key, q.queue_id
  FROM unnest($5::text[], $6::text[]) AS k(tenant_id, target_key)
  LEFT JOIN target_queues AS q ON q.tenant_id = k.tenant_id AND q.target_key = k.target_key
),
missing AS MATERIALIZED (
  SELECT FROM numbers WHERE queue_id IS NULL LIMIT 1
),
inserted AS (
  INSERT INTO tasks ({{task_stored_columns}})
  SELECT {{task_stored_columns}}
  FROM (
    SELECT input.*, n.queue_id
    FROM input
    JOIN numbers AS n ON n.tenant_id = input.tenant_id AND n.target_key = input.target_key
    WHERE NOT EXISTS (SELECT FROM missing)
  ) AS input
  ORDER BY i
  ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
  RETURNING tenant_id, task_id, queue_id, status, next_attempt_at
),
queues AS (
  SELECT q.tenant_id, q.target_key, n.due
  FROM (
    SELECT queue_id, min(next_attempt_at) AS due FROM inserted WHERE status = {{due_status}} GROUP BY queue_id
  ) AS n
  JOIN target_queues AS q ON q.queue_id = n.queue_id
),
queued AS (
  INSERT INTO target_queues AS q (tenant_id, target_key, next_due_at)
  SELECT n.tenant_id, n.target_key, n.due
  FROM queues AS n
  ORDER BY n.tenant_id, n.target_key
  ON CONFLICT (tenant_id, target_key) DO UPDATE
    SET next_due_at = least(q.next_due_at, excluded.next_due_at), version = q.version + 1
),
woken AS (
  SELECT count(pg_notify($7::text, floor(pending.due)::bigint::text)) AS notified
  FROM (SELECT min(next_attempt_at) AS due FROM inserted WHERE status = {{due_status}}) AS pending
  WHERE pending.due IS NOT NULL
)
SELECT count(inserted.task_id)::integer AS inserted,
  CASE WHEN count(inserted.task_id) < $4::integer THEN array_agg(inserted.tenant_id) END AS tenant_ids,
  CASE WHEN count(inserted.task_id) < $4::integer THEN array_agg(inserted.task_id) END AS task_ids,
  EXISTS (SELECT FROM missing) AS queue_missing,
  -- Read where the output needs it, so the setting is made whatever the planner keeps; local to this transaction.
  min(commit_mode.async) AS async_commit
FROM inserted CROSS JOIN woken
  CROSS JOIN (SELECT CASE WHEN $10::boolean THEN set_config('synchronous_commit', 'off', true) END AS async) AS commit_mode
