import { TASK_FIELD_SPECS } from '../../domain/task-fields.js';

// The `tasks` columns of both SQL stores, derived from the one definition of a task's fields (domain/task-fields.ts).
// Store-internal columns (SQLite's `ended_at`; both stores' `queue_id`, which a row keeps in place of `target_key`) are
// not task fields and are named by the store that has them.

/** Every task column, in row order (the order of `TASK_FIELDS`). */
export const TASK_COLUMN_NAMES: readonly string[] = Object.freeze(TASK_FIELD_SPECS.map((spec) => spec.column));
