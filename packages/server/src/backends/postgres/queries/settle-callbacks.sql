-- settle-callbacks: forgets callbacks owed once the relay made them into tasks of their own (`Store.callbacks.settle`).
--
-- args:    $1 text[], $2 uuid[], $3 float8[]: tenant ids, task ids and the owed_at read, by place
-- results: one row per callback forgotten
-- errors:  none
--
-- A row goes only while its `owed_at` is still the one read: a task replayed and ended again since owes its new end,
-- which stays for the relay's next look.
DELETE FROM callbacks_owed AS o
USING unnest($1::text[], $2::uuid[], $3::float8[]) AS s(tenant_id, task_id, owed_at)
WHERE o.tenant_id = s.tenant_id AND o.task_id = s.task_id AND o.owed_at = s.owed_at
RETURNING o.task_id
