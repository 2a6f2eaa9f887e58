-- 014-callbacks: who is told when a task ends (`callback` in domain/task-fields.ts), and the callbacks owed.
--
-- Applied once, in one transaction, by `migrate.ts`. A database made by 013 is migrated in place. Cost on an existing
-- database: the new column has no default, so adding it changes the catalogue only (no row is rewritten); a task
-- without a callback keeps NULL in it (the row's null bitmap).
--
-- `callbacks_owed`: one row per ended task whose callback has not been made into a task of its own yet (the store's
-- outbox). Written by the trigger below within the very statement that ends the task (a completion's final outcome,
-- `cancelTask`), so an end is never committed without its callback owed, whichever statement ended it; read and
-- deleted by the callback relay (callbacks/callback-relay.ts) once the callback's task is inserted. `owed_at` is the
-- time of the end (the task's `updated_at`): the relay's order, and its guard when it deletes a row (a task replayed
-- and ended again meanwhile owes its new end, which the relay must not delete unseen). A task ended again before the
-- relay made its earlier callback owes one row, its latest end.
--
-- The trigger's WHEN is evaluated by the server for every status change without calling the function, the hot path's
-- claims and retries included (a live new status fails it at its first test); the function runs only for a task that
-- ends with a callback. Its `search_path` is fixed at creation (this schema): it runs in whatever session ends the
-- task.
CREATE TABLE callbacks_owed (
  owed_at   double precision NOT NULL,
  task_id   uuid             NOT NULL,
  tenant_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (tenant_id, task_id)
);

CREATE INDEX callbacks_owed_order ON callbacks_owed (owed_at);

ALTER TABLE tasks ADD COLUMN callback json;

-- A policy's callback (`StoredPolicy.callback`): given at enqueue to its tasks that name none. NULL for every policy
-- stored before.
ALTER TABLE policies ADD COLUMN callback json;

CREATE FUNCTION owe_callback() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO callbacks_owed (tenant_id, task_id, owed_at) VALUES (NEW.tenant_id, NEW.task_id, NEW.updated_at)
  ON CONFLICT (tenant_id, task_id) DO UPDATE SET owed_at = EXCLUDED.owed_at;
  RETURN NULL;
END
$$;

CREATE TRIGGER tasks_owe_callback AFTER UPDATE OF status ON tasks FOR EACH ROW
WHEN (NEW.status IN ('SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED')
  AND OLD.status IN ('PENDING', 'IN_FLIGHT')
  AND NEW.callback IS NOT NULL)
EXECUTE FUNCTION owe_callback();
