-- 005-sensitive-body: a task may mark its body sensitive (`sensitiveBody` in domain/task-fields.ts); the body is then
-- stored sealed with the service's encryption key and shown as [REDACTED].
--
-- Applied in place: tasks stored before get false (their bodies were never sealed). A constant default is kept in
-- the catalogue, so the ALTER rewrites no row.

ALTER TABLE tasks ADD COLUMN sensitive_body boolean NOT NULL DEFAULT false;
