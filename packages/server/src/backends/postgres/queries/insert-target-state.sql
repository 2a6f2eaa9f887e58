-- insert-target-state: writes the first version of a key's state, if the key is still absent.
--
-- args:    $1 text: tenant id; $2 text: key; $3 text: value; $4 float8: now
-- results: none; the row count is 1 when written, 0 when another writer got there first
-- errors:  none
INSERT INTO target_state (tenant_id, key, value, version, updated_at)
VALUES ($1::text, $2::text, $3::text, 1, $4::float8)
ON CONFLICT (tenant_id, key) DO NOTHING
