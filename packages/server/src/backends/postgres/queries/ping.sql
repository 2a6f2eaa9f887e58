-- ping: the liveness check behind `/readyz`.
--
-- args:    none
-- results: one row `ok` = 1
-- errors:  connection errors only
SELECT 1 AS ok
