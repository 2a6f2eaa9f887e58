-- get-blob: a blob's bytes.
--
-- args:    $1 text: tenant id; $2 text: key
-- results: one row `data`, or none
-- errors:  none
SELECT data FROM blobs WHERE tenant_id = $1::text AND key = $2::text
