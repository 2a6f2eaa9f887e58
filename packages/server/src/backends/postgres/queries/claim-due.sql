-- claim-due: claims up to $2 due PENDING tasks for one worker, shared round robin among the ready target queues.
--
-- One statement. The sharing rule is `ClaimOptions`' (store/store.ts; `claim-shares.ts` is the same rule in
-- TypeScript):
--
-- 1. ring: the queues whose hint says ready (`ready_at <= now`), read from target_queues_ready without visiting a
--    task: a held target, however large its backlog, costs a claim nothing. Put in ring order (`(tenant_id,
--    target_key)` in byte order, those after the cursor $5/$6 first, wrapping round), and each probed, as the walk
--    reaches it, for the earliest due time of its PENDING tasks (the first entry of its stretch of tasks_due, found
--    by the queue's number: 011-task-queue-number.sql). A queue whose room ($7-$12, `ClaimRooms`: the least of its
--    own and its tenant's) is 0 is left out of the ring: it takes no share and no place among the considered.
-- 2. considered: the walk stops at the $2-th queue whose probe finds a task due; those queues are the ready ones.
--    A hint is early at worst, so a queue passed over with nothing due is not ready (see the refresh below).
-- 3. metered: the considered queues with a limit (004-target-limits.sql), locked in key order, WAITING for a
--    concurrent claim that holds one (never SKIP LOCKED: two claims must not spend the same tokens or the same
--    in-flight slot), and measured as the claims before this one left them, by target_rooms (004-target-limits.sql;
--    given the queues' numbers since 011): each one's room, the whole tokens of its bucket now and the slots its
--    in-flight limit leaves. A queue such a claim throttled or drained drops out. Unlimited queues take none of this
--    (no lock, no count), and a claim that considers none does not call target_rooms at all.
-- 4. served: the considered queues, less the limited ones without room: n queues. found: each one's earliest due
--    tasks, up to its share ceil($2 / n), its room and its room in the claim's rooms, locked `FOR UPDATE SKIP
--    LOCKED`: a row a concurrent claim holds is stepped over, and a row it changed and committed is re-checked
--    against the WHERE clause (READ COMMITTED) and no longer qualifies. Two claims never return the same task.
-- 5. kept: in order of (rank in its queue, ring position), round robin, less each tenant's tasks beyond its room in
--    the claim's rooms (they stay PENDING; their row locks end with the statement), the first $2. They become
--    IN_FLIGHT and leased; the due time is left as it was (dispatch lag is measured from it).
-- 6. spent: each metered queue's bucket less the tasks kept from it, counted at now, and its throttle: until the
--    next whole token when less than one is left, until its earliest lease expiry still to come when it is at its
--    in-flight limit (the later of the two), else none.
-- 7. refreshed: the hint of every queue the claim left without a due task (drained now, or passed over in step 2)
--    moves to the earliest due time of the PENDING tasks left in this statement's snapshot (NULL: none), but only
--    `WHERE version = <the version read in step 1>`, re-checked on the newest row version, and `SKIP LOCKED`.
--    Every statement that makes a task PENDING raises the version (003-targets.sql), so a refresh computed without
--    that task is dropped, never written: the hint may stay early, never become late. A refresh never raises the
--    version itself, and never waits for a row: claims do not queue behind each other or behind inserts. A queue
--    that still has a task due keeps its hint (at or before now, so early at worst): a busy target's row is not
--    rewritten by every claim. A limited queue, which the claim holds since step 3, is refreshed by the same rule in
--    the same UPDATE that writes its bucket and throttle (a row is written once per statement).
--
-- A limited queue's row is mostly newer than this statement's snapshot (another claim changed it while this one
-- waited), so the UPDATE re-reads it (EvalPlanQual). It joins `refreshable` to `spent`, never a UNION ALL of them: from
-- a UNION ALL of two CTEs, that re-read dropped the write of the second such row.
--
-- args:    $1 float8: now (the engine's clock); $2 integer: most tasks to claim (> 0); $3 text: worker id;
--          $4 float8: the lease's expiry (now + lease); $5 text, $6 text: the queue the ring starts after
--          (tenant id, target key), or both null for the start; the claim's rooms (`ClaimRooms`, all null without):
--          $7 text[], $8 integer[]: target queues (`tenant id || E'\n' || target key`) and their rooms; $9 text[],
--          $10 integer[]: tenants and their rooms; $11 integer: the room of every other queue; $12 integer: the room
--          of every other tenant
-- results: the claimed task rows (IN_FLIGHT, token and version raised), in round-robin order
-- errors:  none
--
-- `ring` is read lazily (a CTE's rows are computed as its readers ask for them), so its probes stop with the walk:
-- a claim probes its considered queues and those passed over, not every ready queue.
WITH ring AS (
  SELECT r.queue_id, r.target_key, r.version, r.limited, r.pos, r.queue_slots, r.tenant_slots,
    (SELECT t.next_attempt_at FROM tasks AS t
     WHERE t.queue_id = r.queue_id AND t.status = {{due_status}}
     ORDER BY t.next_attempt_at
     LIMIT 1) AS first_due
  FROM (
    SELECT s.*,
      row_number() OVER (
        ORDER BY ((s.tenant_id, s.target_key) <= ($5::text, $6::text)) IS TRUE, s.tenant_id, s.target_key) AS pos
    FROM (
      -- Looked up by position in the rooms' arrays, not joined: the ready queues keep coming from target_queues_ready.
      -- least() passes over nulls: null only when neither the queue nor its tenant has a room.
      SELECT q.queue_id, q.tenant_id, q.target_key, q.version,
        q.rate_per_second IS NOT NULL OR q.max_in_flight IS NOT NULL AS limited,
        least(
          coalesce(($8::integer[])[array_position($7::text[], q.tenant_id || E'\n' || q.target_key)], $11::integer),
          coalesce(($10::integer[])[array_position($9::text[], q.tenant_id)], $12::integer)) AS queue_slots,
        coalesce(($10::integer[])[array_position($9::text[], q.tenant_id)], $12::integer) AS tenant_slots
      FROM target_queues AS q
      WHERE q.ready_at <= $1::float8
    ) AS s
    WHERE s.queue_slots IS NULL OR s.queue_slots > 0
  ) AS r
),
considered AS (
  SELECT queue_id, target_key, version, limited, pos, queue_slots, tenant_slots
  FROM ring WHERE first_due <= $1::float8 LIMIT $2::integer
),
metered AS MATERIALIZED (
  SELECT * FROM target_rooms(
    (SELECT array_agg(c.queue_id) FROM considered AS c WHERE c.limited),
    $1::float8)
),
served AS (
  SELECT c.queue_id, c.target_key, c.pos, m.room, c.queue_slots, c.tenant_slots
  FROM considered AS c
  LEFT JOIN metered AS m ON m.queue_id = c.queue_id
  WHERE NOT c.limited OR (m.queue_id IS NOT NULL AND (m.room IS NULL OR m.room > 0))
),
sizing AS (
  SELECT (SELECT count(*) FROM served) AS n, count(*) AS considered_n, max(pos) AS last_pos FROM considered
),
found AS (
  SELECT c.pos, c.queue_id, c.target_key, c.tenant_slots, f.tenant_id, f.task_id, f.next_attempt_at, f.ctid
  FROM served AS c
  CROSS JOIN LATERAL (
    SELECT t.tenant_id, t.task_id, t.next_attempt_at, t.ctid
    FROM tasks AS t
    WHERE t.queue_id = c.queue_id AND t.status = {{due_status}}
      AND t.next_attempt_at <= $1::float8
    ORDER BY t.next_attempt_at
    LIMIT least(c.room, c.queue_slots, (SELECT ($2::integer + s.n - 1) / greatest(s.n, 1) FROM sizing AS s))
    FOR UPDATE OF t SKIP LOCKED
  ) AS f
),
kept AS (
  SELECT queue_id, target_key, tenant_id, task_id, ctid, pos, rank
  FROM (
    SELECT dealt.*, row_number() OVER (PARTITION BY tenant_id ORDER BY rank, pos) AS nth_of_tenant
    FROM (
      SELECT queue_id, target_key, tenant_id, task_id, ctid, pos, tenant_slots,
        row_number() OVER (PARTITION BY pos ORDER BY next_attempt_at, task_id) AS rank
      FROM found
    ) AS dealt
  ) AS roomed
  WHERE tenant_slots IS NULL OR nth_of_tenant <= tenant_slots
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
  -- The key from `kept` (its queue's, read with the ring), not looked up again row by row.
  RETURNING {{task_columns:t:kept}}, kept.rank, kept.pos
),
drained AS MATERIALIZED (
  -- Considered queues: the earliest due time left once this claim's tasks are gone (their rows still read PENDING
  -- in this statement's snapshot).
  SELECT c.queue_id, c.version, c.limited,
    (SELECT t.next_attempt_at FROM tasks AS t
     WHERE t.queue_id = c.queue_id AND t.status = {{due_status}}
       AND (t.tenant_id, t.task_id) NOT IN (SELECT k.tenant_id, k.task_id FROM kept AS k)
     ORDER BY t.next_attempt_at
     LIMIT 1) AS next_due
  FROM considered AS c
  UNION ALL
  -- Queues the walk passed over (the whole ring when fewer than $2 were considered): nothing due.
  SELECT w.queue_id, w.version, false, w.first_due
  FROM (SELECT * FROM ring LIMIT (SELECT CASE WHEN s.considered_n < $2::integer THEN NULL ELSE s.last_pos END FROM sizing AS s)) AS w
  WHERE w.first_due IS NULL OR w.first_due > $1::float8
),
refreshable AS (
  -- Limited queues are taken whatever their hint needs: this claim holds them since step 3, and writes their bucket.
  SELECT q.queue_id, d.next_due,
    (d.next_due IS NULL OR d.next_due > $1::float8) AND q.version = d.version AS refresh
  FROM drained AS d
  JOIN target_queues AS q ON q.queue_id = d.queue_id
  WHERE ((d.next_due IS NULL OR d.next_due > $1::float8) AND q.version = d.version) OR d.limited
  FOR UPDATE OF q SKIP LOCKED
),
spent AS (
  SELECT m.queue_id, m.tokens - k.n AS tokens, m.tokens_at,
    greatest(
      bucket_refill_at(m.tokens - k.n, m.tokens_at, m.rate_per_second),
      CASE WHEN m.in_flight + k.n >= m.max_in_flight THEN least(m.next_lease_expiry, $4::float8) END
    ) AS throttled_until
  FROM metered AS m
  CROSS JOIN LATERAL (
    SELECT count(*) AS n FROM kept WHERE kept.queue_id = m.queue_id) AS k
),
rewritten AS (
  UPDATE target_queues AS q SET
    next_due_at = CASE WHEN r.refresh THEN r.next_due ELSE q.next_due_at END,
    tokens = CASE WHEN s.queue_id IS NULL THEN q.tokens ELSE s.tokens END,
    tokens_at = CASE WHEN s.queue_id IS NULL THEN q.tokens_at ELSE s.tokens_at END,
    throttled_until = CASE WHEN s.queue_id IS NULL THEN q.throttled_until ELSE s.throttled_until END
  FROM refreshable AS r
  LEFT JOIN spent AS s ON s.queue_id = r.queue_id
  WHERE q.queue_id = r.queue_id AND (r.refresh OR s.queue_id IS NOT NULL)
)
SELECT {{task_names}} FROM claimed ORDER BY rank, pos
