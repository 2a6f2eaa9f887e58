-- 004-sensitive-body: a task may mark its body sensitive (`sensitiveBody` in domain/task-fields.ts); the body is then
-- stored sealed with the service's encryption key and shown as [REDACTED].
--
-- Applied in place: tasks stored before get 0 (their bodies were never sealed). Cost: one ALTER, no rewrite of rows.

ALTER TABLE tasks ADD COLUMN sensitive_body INTEGER NOT NULL DEFAULT 0 CHECK (sensitive_body IN (0, 1));
