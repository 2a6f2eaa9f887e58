import { TASK_FIELDS, TASK_FIELD_SPECS } from '../../domain/task-fields.js';

// The `tasks` columns of both SQL stores, derived from the one definition of a task's fields (domain/task-fields.ts).
// Store-internal columns (SQLite's `ended_at`; both stores' `queue_id`, which a row keeps in place of `target_key`) are
// not task fields and are named by the store that has them.

/** Every task column, in row order (the order of `TASK_FIELDS`). */
export const TASK_COLUMN_NAMES: readonly string[] = Object.freeze(TASK_FIELD_SPECS.map((spec) => spec.column));

/**
 * The one task column a stored row does not keep: both stores keep the target key once, in `target_queues`, and the
 * row its queue's number instead (SQLite 010, PostgreSQL 011); reads give the key back under this name.
 */
export const TARGET_KEY_COLUMN: string = TASK_FIELDS.targetKey.column;

/** The columns a `tasks` row stores, in row order: {@link TASK_COLUMN_NAMES} with `queue_id` in place of the key. */
export const TASK_STORED_COLUMN_NAMES: readonly string[] = Object.freeze(
  TASK_COLUMN_NAMES.map((column) => (column === TARGET_KEY_COLUMN ? 'queue_id' : column)),
);
