import { TASK_FIELD_SPECS } from '../../domain/task-fields.js';

// The `tasks` columns of both SQL stores, derived from the one definition of a task's fields (domain/task-fields.ts).
// Store-internal columns (SQLite's `ended_at`) are not task fields and are named by the store that has them.

/** Every task column, in row order (the order of `TASK_FIELDS`). */
export const TASK_COLUMN_NAMES: readonly string[] = Object.freeze(TASK_FIELD_SPECS.map((spec) => spec.column));

/**
 * The task columns as a SELECT, RETURNING or INSERT list, each prefixed with `alias.` when one is given.
 *
 * @example
 * ```ts
 * taskColumnList('t'); // 't.tenant_id, t.task_id, …'
 * ```
 */
export function taskColumnList(alias?: string): string {
  return TASK_COLUMN_NAMES.map((column) => (alias === undefined ? column : `${alias}.${column}`)).join(', ');
}
