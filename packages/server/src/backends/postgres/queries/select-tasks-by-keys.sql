-- select-tasks-by-keys: the stored tasks of some idempotency keys (the duplicates of an insert-tasks).
--
-- args:    $1 text[]: tenant ids; $2 text[]: idempotency keys, pairwise with $1
-- results: task rows, one per pair found, in no particular order (through tasks_idempotency_key)
-- errors:  none
SELECT {{task_columns:t}}
FROM unnest($1::text[], $2::text[]) AS k(tenant_id, idempotency_key)
JOIN tasks AS t ON t.tenant_id = k.tenant_id AND t.idempotency_key = k.idempotency_key
