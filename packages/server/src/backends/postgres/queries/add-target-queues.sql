-- add-target-queues: makes the target queues an insert names that do not exist yet (insert-tasks.sql says why apart).
--
-- args:    $1 text[], $2 text[]: the queues' tenant ids and target keys, by place
-- results: none
-- effects: a `target_queues` row, with no hint (no PENDING task yet), for each queue missing; committed at once, so
--          insert-tasks, the next statement, finds its number. Rows are locked in key order (byte order: COLLATE
--          "C"), the order of every statement that locks several queue rows; a queue another instance is making
--          at the same time is waited for, not made twice.
-- errors:  none
INSERT INTO target_queues (tenant_id, target_key)
SELECT k.tenant_id, k.target_key
FROM unnest($1::text[], $2::text[]) AS k(tenant_id, target_key)
WHERE NOT EXISTS (SELECT FROM target_queues AS e WHERE e.tenant_id = k.tenant_id AND e.target_key = k.target_key)
ORDER BY k.tenant_id COLLATE "C", k.target_key COLLATE "C"
ON CONFLICT (tenant_id, target_key) DO NOTHING
