-- next-due-at: the earliest due time of any PENDING task: the first entry of tasks_due.
--
-- args:    none
-- results: one row `at`, or none
-- errors:  none
SELECT next_attempt_at AS at FROM tasks WHERE status = 'PENDING' ORDER BY next_attempt_at LIMIT 1
