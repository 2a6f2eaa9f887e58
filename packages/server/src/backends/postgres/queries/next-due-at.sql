-- next-due-at: when a claim may next find work: the earliest time at which a target queue is ready.
--
-- The two queues that come first in target_queues_ready (by ready_at: the hint, or the end of a hold or a throttle
-- if later) are read, and the first is probed for the earliest due time of its PENDING tasks (the first entry of its
-- stretch of tasks_due): the answer is that queue's exact time (with its hold and throttle), or the second queue's
-- ready_at if earlier.
-- Every hint is at or before its queue's truth (003-targets.sql), so every other queue is ready no earlier than the
-- second one's ready_at: the answer is never late, and it is exact whenever the first queue's truth comes first,
-- though a claim has not yet corrected its hint (as after a claim that took a queue's earliest tasks but not all).
--
-- args:    none
-- results: one row `at`: a time, or null when no queue has a PENDING task
-- errors:  none
WITH head AS (
  SELECT queue_id, held_until, throttled_until, ready_at, row_number() OVER (ORDER BY ready_at) AS n
  FROM target_queues
  WHERE ready_at IS NOT NULL
  ORDER BY ready_at
  LIMIT 2
)
-- `greatest` skips NULLs: a first queue found without a PENDING task (its hint not yet corrected) counts for nothing.
SELECT min(CASE WHEN h.n > 1 THEN h.ready_at WHEN p.due IS NOT NULL THEN greatest(p.due, h.held_until, h.throttled_until) END) AS at
FROM head AS h
LEFT JOIN LATERAL (
  SELECT t.next_attempt_at AS due
  FROM tasks AS t
  WHERE h.n = 1 AND t.queue_id = h.queue_id AND t.status = {{due_status}}
  ORDER BY t.next_attempt_at
  LIMIT 1
) AS p ON true
