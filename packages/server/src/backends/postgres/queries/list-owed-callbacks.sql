-- list-owed-callbacks: the earliest callbacks owed (`Store.callbacks.owed`; 014-callbacks.sql), for the relay.
--
-- args:    $1 integer: at most this many
-- results: (tenant_id, task_id, owed_at), earliest end first, through `callbacks_owed_order`
-- errors:  none
SELECT tenant_id, task_id, owed_at
FROM callbacks_owed
ORDER BY owed_at
LIMIT $1::integer
