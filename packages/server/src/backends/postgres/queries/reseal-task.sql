-- reseal-task: replaces a task's headers and inline body if they are still the expected ones, and nothing else.
--
-- A re-seal of its secrets under a new encryption key (`retryd keys rotate-encryption`): the status, version,
-- updated_at, lease and fencing token stay as they are, so an attempt in flight keeps its lease and its completion
-- still applies. The headers compare as jsonb (as values, whatever the order of their names or the spacing of their
-- json text); the body as its bytes.
--
-- args:    $1 text: tenant id; $2 uuid: task id; $3 jsonb: the expected headers; $4 bytea: the expected body's UTF-8
--          bytes, or null; $5 json: the new headers; $6 bytea: the new body's UTF-8 bytes, or null
-- results: the task row after the write, or none (its headers or body differ, or no such task: the caller reads it
--          to tell which)
-- errors:  none
UPDATE tasks SET headers = $5::json, body = $6::bytea
WHERE tenant_id = $1::text AND task_id = $2::uuid
  AND headers::jsonb = $3::jsonb AND body IS NOT DISTINCT FROM $4::bytea
RETURNING {{task_columns}}
