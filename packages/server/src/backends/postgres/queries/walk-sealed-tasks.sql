-- walk-sealed-tasks: one page of the walk over every tenant's tasks that may hold a sealed value, in key order.
--
-- A sealed header is a JSON object `{"enc": …}` among `headers`; a sensitive body is sealed inline or in the blob
-- store. The walk follows the primary key from where the last page ended and reads the rows it passes: it serves
-- `retryd keys rotate-encryption`, an operator's command, not a hot path. A task whose headers hold an object without
-- `enc` (a reference, `{"ref": …}`) is not returned unless its body is sensitive.
--
-- args:    $1 text, $2 uuid: the (tenant_id, task_id) the page starts after ('' and the nil UUID for the first page: no
--          tenant id is empty); $3 integer: rows to return (page size + 1)
-- results: task rows, tenant_id then task_id ascending
-- errors:  none
SELECT {{task_columns}}
FROM tasks
WHERE (tenant_id, task_id) > ($1::text, $2::uuid)
  AND (sensitive_body OR jsonb_path_exists(headers::jsonb, '$.*.enc'))
ORDER BY tenant_id, task_id
LIMIT $3::integer
