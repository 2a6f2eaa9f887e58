-- reseal-task: replaces a task's headers and inline body if they are still the expected ones, and nothing else.
--
-- A re-seal of its secrets under a new encryption key (`retryd keys rotate-encryption`): the status, version,
-- updated_at, lease and fencing token stay as they are, so an attempt in flight keeps its lease and its completion
-- still applies. The headers compare as jsonb (as values, whatever the order of their names); the body as the text of
-- its json value, which is kept as written (json has no equality operator, and a body may hold U+0000, which jsonb
-- cannot).
--
-- args:    $1 text: tenant id; $2 uuid: task id; $3 jsonb: the expected headers; $4 text: the expected body as
--          JSON text (a JSON string, as insert-tasks writes it), or null; $5 jsonb: the new headers; $6 text: the new
--          body as JSON text, or null
-- results: the task row after the write, or none (its headers or body differ, or no such task: the caller reads it
--          to tell which)
-- errors:  none
UPDATE tasks SET headers = $5::jsonb, body = $6::json
WHERE tenant_id = $1::text AND task_id = $2::uuid
  AND headers = $3::jsonb AND body::text IS NOT DISTINCT FROM $4::text
RETURNING {{task_columns}}
