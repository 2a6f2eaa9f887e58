-- list-targets: a tenant's target queues in key order from a key on, each with its limits, gate and counts as of now.
--
-- Serves both admin reads: a page (`listTargets`: from the key its cursor names, one row more than the page so that
-- the extra row's key is the next cursor) and one target (`getTarget`: from its key, one row, which is the target if
-- its key matches). `held_until` and `throttled_until` are given only while they lie ahead. The counts are bounded:
-- the due tasks are counted along the queue's stretch of tasks_due up to $5 entries (DUE_COUNT_CAP), and the tasks
-- in flight are counted for the whole page at once, from the tenant's IN_FLIGHT stretch of tasks_by_status.
--
-- args:    $1 text: tenant id; $2 text: the first target key to return ('' for the first page); $3 integer: rows
--          to return; $4 float8: now; $5 integer: most due tasks to count per target
-- results: rows (tenant_id, target_key, rate_per_second, burst, max_in_flight, held_until, throttled_until,
--          next_due_at, in_flight, due_tasks), target_key ascending (byte order)
-- errors:  none
WITH page AS MATERIALIZED (
  SELECT q.queue_id, q.tenant_id, q.target_key, q.rate_per_second, q.burst, q.max_in_flight,
    CASE WHEN q.held_until > $4::float8 THEN q.held_until END AS held_until,
    CASE WHEN q.throttled_until > $4::float8 THEN q.throttled_until END AS throttled_until,
    q.next_due_at
  FROM target_queues AS q
  WHERE q.tenant_id = $1::text AND q.target_key >= $2::text
  ORDER BY q.target_key
  LIMIT $3::integer
),
in_flight AS (
  SELECT t.queue_id, count(*) AS n
  FROM tasks AS t
  WHERE t.tenant_id = $1::text AND t.status = {{leased_status}} AND t.queue_id IN (SELECT p.queue_id FROM page AS p)
  GROUP BY t.queue_id
)
SELECT p.tenant_id, p.target_key, p.rate_per_second, p.burst, p.max_in_flight, p.held_until, p.throttled_until,
  p.next_due_at, coalesce(f.n, 0) AS in_flight,
  (SELECT count(*) FROM (
     SELECT FROM tasks AS t
     WHERE t.queue_id = p.queue_id AND t.status = {{due_status}}
       AND t.next_attempt_at <= $4::float8
     LIMIT $5::integer) AS due) AS due_tasks
FROM page AS p
LEFT JOIN in_flight AS f ON f.queue_id = p.queue_id
ORDER BY p.target_key
