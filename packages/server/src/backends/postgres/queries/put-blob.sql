-- put-blob: stores a blob under (tenant, key), replacing an earlier one with the same key.
--
-- args:    $1 text: tenant id; $2 text: key; $3 bytea: the bytes
-- results: none
-- errors:  none
INSERT INTO blobs (tenant_id, key, data) VALUES ($1::text, $2::text, $3::bytea)
ON CONFLICT (tenant_id, key) DO UPDATE SET data = excluded.data
