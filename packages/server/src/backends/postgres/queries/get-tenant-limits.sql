-- get-tenant-limits: a tenant's own limits on the API.
--
-- args:    $1 text: tenant id
-- results: one row (requests_per_second, max_pending_tasks; NULL: no such limit), or none when the tenant has no
--          limits of its own
-- errors:  none
SELECT requests_per_second, max_pending_tasks FROM tenant_limits WHERE tenant_id = $1::text
