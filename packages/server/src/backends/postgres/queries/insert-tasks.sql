-- insert-tasks: inserts a batch of new tasks in one statement, keeps their target queues, and wakes idle instances.
--
-- args:    $1 jsonb: an array with one array per task, its columns in row order by place, the body left out
--             (`JSONB_FIELDS` of insert-records.ts; a json column as its JSON text, a `hex` or `uuid` one as its text);
--          $2 json: an array with one array per task, in the same order, of its body as the base64 of its UTF-8
--             bytes, or null (`JSON_TEXT_FIELDS`): kept as json, not jsonb, whose values hold at most 256 MB;
--          $3 text: the wake-up channel (`retryd_due_<schema>`)
--          A task's index `i` is its place in the arrays (from 1).
-- results: (tenant_id, task_id) of each task inserted. A task whose (tenant_id, idempotency_key) is already
--          stored, by an earlier call or earlier in the same batch (lower `i`), is skipped: `ON CONFLICT ... DO
--          NOTHING` waits for a concurrent insert of the same key to end, so exactly one of them inserts.
-- effects: the target queue of every inserted task exists afterwards. A queue given a PENDING task has its hint
--          lowered to that task's due time if later (`least`) and its version raised, always (the rule of
--          003-targets.sql: a claim's refresh from an older snapshot must not raise the hint past this task). A queue
--          given only tasks already leased (the hand-off) is created if missing and otherwise left alone: no row
--          lock, so hand-offs to one target do not queue behind each other. `NOTIFY` on $3 when a PENDING task was
--          inserted, delivered at commit (one per transaction).
-- errors:  23505 on tasks_pkey when a task id is reused under another idempotency key (a caller bug).
--
-- The tasks are read by place from positional arrays rather than as named records (`json_to_recordset`), which the
-- server reads in half the time: each column is found by its index instead of every record's keys being hashed.
-- WITH ORDINALITY yields the rows in `i` order, which the planner knows: `ORDER BY i` adds no sort.
--
-- The queue rows are written from the grouped RETURNING of the task insert, so every task row is inserted before
-- any queue row is locked (a key conflict waits on another insert while holding no queue row), and in key order.
WITH input AS (
  SELECT r.i, {{task_record_values}}
  FROM ROWS FROM (jsonb_array_elements($1::jsonb), json_array_elements($2::json)) WITH ORDINALITY AS r(task, texts, i)
),
inserted AS (
  INSERT INTO tasks ({{task_columns}})
  SELECT {{task_columns}}
  FROM input
  ORDER BY i
  ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
  RETURNING tenant_id, task_id, target_key, status, next_attempt_at
),
queues AS (
  SELECT tenant_id, target_key, min(next_attempt_at) FILTER (WHERE status = {{due_status}}) AS due
  FROM inserted
  GROUP BY tenant_id, target_key
),
queued AS (
  INSERT INTO target_queues AS q (tenant_id, target_key, next_due_at)
  SELECT n.tenant_id, n.target_key, n.due
  FROM queues AS n
  -- A queue with no PENDING task here is only created: left out when it exists, so it is neither locked nor bumped.
  WHERE n.due IS NOT NULL
    OR NOT EXISTS (SELECT FROM target_queues AS e WHERE e.tenant_id = n.tenant_id AND e.target_key = n.target_key)
  ORDER BY n.tenant_id, n.target_key
  ON CONFLICT (tenant_id, target_key) DO UPDATE
    SET next_due_at = least(q.next_due_at, excluded.next_due_at), version = q.version + 1
    WHERE excluded.next_due_at IS NOT NULL
),
woken AS (
  SELECT count(pg_notify($3::text, '')) AS notified
  FROM (SELECT FROM inserted WHERE status = {{due_status}} LIMIT 1) AS pending
)
SELECT inserted.tenant_id, inserted.task_id FROM inserted CROSS JOIN woken
