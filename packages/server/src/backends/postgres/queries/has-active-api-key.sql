-- has-active-api-key: whether any API key is not revoked (with none, the service is open on loopback only).
--
-- EXISTS stops at the first active key; the partial index api_keys_active holds those only, so the answer is one
-- index entry away however many keys were revoked.
--
-- args:    none
-- results: one row (active boolean)
-- errors:  none
SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL) AS active
