-- update-target-state: writes a key's state over the expected version only.
--
-- args:    $1 text: tenant id; $2 text: key; $3 bigint: expected version; $4 text: value; $5 float8: now
-- results: none; the row count is 1 when written, 0 on a lost race
-- errors:  none
UPDATE target_state SET value = $4::text, version = version + 1, updated_at = $5::float8
WHERE tenant_id = $1::text AND key = $2::text AND version = $3::bigint
