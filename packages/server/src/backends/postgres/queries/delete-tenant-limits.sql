-- delete-tenant-limits: deletes a tenant's own limits (the service-wide defaults apply again).
--
-- args:    $1 text: tenant id
-- results: none; the row count is 1 when it had limits, 0 when it had none
-- errors:  none
DELETE FROM tenant_limits WHERE tenant_id = $1::text
