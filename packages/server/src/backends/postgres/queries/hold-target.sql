-- hold-target: holds a target queue until a time: claims skip it (through target_queues_ready) until then.
--
-- Holds extend: the queue is held until the latest time it was given (`greatest`, which skips a NULL), so a breaker
-- opening for 5 s does not cut short a Retry-After of a minute. The hint is not touched; a queue with no row yet has
-- no task (every statement that makes one PENDING makes its row), so it starts with none, and the hold makes the
-- target known (listed by list-targets).
--
-- args:    $1 text: tenant id; $2 text: target key; $3 float8: held until
-- results: none
-- errors:  none
INSERT INTO target_queues AS q (tenant_id, target_key, held_until)
VALUES ($1::text, $2::text, $3::float8)
ON CONFLICT (tenant_id, target_key) DO UPDATE SET held_until = greatest(q.held_until, excluded.held_until)
