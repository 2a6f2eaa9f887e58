-- delete-blob: removes a blob; removing an absent one changes nothing.
--
-- args:    $1 text: tenant id; $2 text: key
-- results: none
-- errors:  none
DELETE FROM blobs WHERE tenant_id = $1::text AND key = $2::text
