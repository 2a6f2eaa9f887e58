-- queue-tenants: every tenant that has a target queue (every tenant that ever had a task), in id order.
--
-- A skip scan of target_queues' primary key (tenant_id, target_key): one seek per tenant, however many queues each
-- has. For reads that visit every tenant (oldest-pending-page); never in the dispatch path.
--
-- args:    none
-- results: rows (tenant_id), ascending
-- errors:  none
WITH RECURSIVE tenants (tenant_id) AS (
  (SELECT q.tenant_id FROM target_queues AS q ORDER BY q.tenant_id LIMIT 1)
  UNION ALL
  SELECT (SELECT q.tenant_id FROM target_queues AS q WHERE q.tenant_id > t.tenant_id ORDER BY q.tenant_id LIMIT 1)
  FROM tenants AS t
  WHERE t.tenant_id IS NOT NULL
)
SELECT tenant_id FROM tenants WHERE tenant_id IS NOT NULL
