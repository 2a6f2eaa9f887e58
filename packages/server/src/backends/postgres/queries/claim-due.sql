-- claim-due: claims up to $2 due PENDING tasks for one worker, shared round robin among the ready target queues.
--
-- One statement. The sharing rule is `ClaimOptions`' (store/store.ts; `claim-shares.ts` is the same rule in
-- TypeScript):
--
-- 1. ring: the queues whose hint says ready (`ready_at <= now`), read from target_queues_ready without visiting a
--    task: a held target, however large its backlog, costs a claim nothing. Put in ring order (`(tenant_id,
--    target_key)` in byte order, those after the cursor $5/$6 first, wrapping round), and each probed, as the walk
--    reaches it, for the earliest due time of its PENDING tasks (the first entry of its stretch of tasks_due).
-- 2. considered: the walk stops at the $2-th queue whose probe finds a task due; those n queues are the ready ones.
--    A hint is early at worst, so a queue passed over with nothing due is not ready (see the refresh below).
-- 3. found: each considered queue's earliest due tasks, up to its share ceil($2 / n), locked `FOR UPDATE SKIP
--    LOCKED`: a row a concurrent claim holds is stepped over, and a row it changed and committed is re-checked
--    against the WHERE clause (READ COMMITTED) and no longer qualifies. Two claims never return the same task.
-- 4. kept: the first $2 of them by (rank in its queue, ring position): round robin. They become IN_FLIGHT and
--    leased; the due time is left as it was (dispatch lag is measured from it).
-- 5. refreshed: the hint of every queue the claim left without a due task (drained now, or passed over in step 2)
--    moves to the earliest due time of the PENDING tasks left in this statement's snapshot (NULL: none), but only
--    `WHERE version = <the version read in step 1>`, re-checked on the newest row version, and `SKIP LOCKED`.
--    Every statement that makes a task PENDING raises the version (003-targets.sql), so a refresh computed without
--    that task is dropped, never written: the hint may stay early, never become late. A refresh never raises the
--    version itself, and never waits for a row: claims do not queue behind each other or behind inserts. A queue
--    that still has a task due keeps its hint (at or before now, so early at worst): a busy target's row is not
--    rewritten by every claim.
--
-- args:    $1 float8: now (the engine's clock); $2 integer: most tasks to claim (> 0); $3 text: worker id;
--          $4 float8: the lease's expiry (now + lease); $5 text, $6 text: the queue the ring starts after
--          (tenant id, target key), or both null for the start
-- results: the claimed task rows (IN_FLIGHT, token and version raised), in round-robin order
-- errors:  none
--
-- `ring` is read lazily (a CTE's rows are computed as its readers ask for them), so its probes stop with the walk:
-- a claim probes its considered queues and those passed over, not every ready queue.
WITH ring AS (
  SELECT r.tenant_id, r.target_key, r.version, r.pos,
    (SELECT t.next_attempt_at FROM tasks AS t
     WHERE t.tenant_id = r.tenant_id AND t.target_key = r.target_key AND t.status = {{due_status}}
     ORDER BY t.next_attempt_at
     LIMIT 1) AS first_due
  FROM (
    SELECT q.tenant_id, q.target_key, q.version,
      row_number() OVER (
        ORDER BY ((q.tenant_id, q.target_key) <= ($5::text, $6::text)) IS TRUE, q.tenant_id, q.target_key) AS pos
    FROM target_queues AS q
    WHERE q.ready_at <= $1::float8
  ) AS r
),
considered AS (
  SELECT tenant_id, target_key, version, pos FROM ring WHERE first_due <= $1::float8 LIMIT $2::integer
),
sizing AS (
  SELECT count(*) AS n, max(pos) AS last_pos FROM considered
),
found AS (
  SELECT c.pos, c.tenant_id, f.task_id, f.next_attempt_at, f.ctid
  FROM considered AS c
  CROSS JOIN LATERAL (
    SELECT t.task_id, t.next_attempt_at, t.ctid
    FROM tasks AS t
    WHERE t.tenant_id = c.tenant_id AND t.target_key = c.target_key AND t.status = {{due_status}}
      AND t.next_attempt_at <= $1::float8
    ORDER BY t.next_attempt_at
    LIMIT (SELECT ($2::integer + s.n - 1) / greatest(s.n, 1) FROM sizing AS s)
    FOR UPDATE OF t SKIP LOCKED
  ) AS f
),
kept AS (
  SELECT tenant_id, task_id, ctid, pos, rank
  FROM (
    SELECT tenant_id, task_id, ctid, pos, row_number() OVER (PARTITION BY pos ORDER BY next_attempt_at, task_id) AS rank
    FROM found
  ) AS dealt
  ORDER BY rank, pos
  LIMIT $2::integer
),
claimed AS (
  UPDATE tasks AS t SET
    status = {{leased_status}},
    lease_owner = $3::text,
    lease_expires_at = $4::float8,
    fencing_token = t.fencing_token + 1,
    version = t.version + 1,
    updated_at = $1::float8
  FROM kept
  -- By ctid: the lateral's FOR UPDATE locked each row, so it cannot move before this statement ends, and each one
  -- is a TID scan. Joined on its key (or with the status repeated here) the planner took a full scan of an index of
  -- a young, unanalysed table instead (all of tasks_due, or all of the table): 20,000 rows per claim in W1.
  WHERE t.ctid = kept.ctid
  RETURNING {{task_columns:t}}, kept.rank, kept.pos
),
drained AS MATERIALIZED (
  -- Considered queues: the earliest due time left once this claim's tasks are gone (their rows still read PENDING
  -- in this statement's snapshot).
  SELECT c.tenant_id, c.target_key, c.version,
    (SELECT t.next_attempt_at FROM tasks AS t
     WHERE t.tenant_id = c.tenant_id AND t.target_key = c.target_key AND t.status = {{due_status}}
       AND (t.tenant_id, t.task_id) NOT IN (SELECT k.tenant_id, k.task_id FROM kept AS k)
     ORDER BY t.next_attempt_at
     LIMIT 1) AS next_due
  FROM considered AS c
  UNION ALL
  -- Queues the walk passed over (the whole ring when fewer than $2 were considered): nothing due.
  SELECT w.tenant_id, w.target_key, w.version, w.first_due
  FROM (SELECT * FROM ring LIMIT (SELECT CASE WHEN s.n < $2::integer THEN NULL ELSE s.last_pos END FROM sizing AS s)) AS w
  WHERE w.first_due IS NULL OR w.first_due > $1::float8
),
refreshable AS (
  SELECT q.tenant_id, q.target_key, d.next_due
  FROM drained AS d
  JOIN target_queues AS q ON q.tenant_id = d.tenant_id AND q.target_key = d.target_key
  WHERE (d.next_due IS NULL OR d.next_due > $1::float8) AND q.version = d.version
  FOR UPDATE OF q SKIP LOCKED
),
refreshed AS (
  UPDATE target_queues AS q SET next_due_at = r.next_due
  FROM refreshable AS r
  WHERE q.tenant_id = r.tenant_id AND q.target_key = r.target_key
)
SELECT {{task_columns}} FROM claimed ORDER BY rank, pos
