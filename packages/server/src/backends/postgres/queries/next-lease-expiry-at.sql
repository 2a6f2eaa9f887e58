-- next-lease-expiry-at: the earliest lease expiry of any IN_FLIGHT task: the first entry of tasks_lease.
--
-- args:    none
-- results: one row `at`, or none
-- errors:  none
SELECT lease_expires_at AS at FROM tasks WHERE status = {{leased_status}} ORDER BY lease_expires_at LIMIT 1
