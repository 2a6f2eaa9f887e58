import { checkedTaskId, isTaskId } from '../../domain/task-id.js';

// A task id (codec `uuid`, see domain/task-fields.ts and domain/task-id.ts) as the SQL stores bind it: SQLite keeps its
// 16 bytes (a BLOB), PostgreSQL a uuid.
// SQLite reads turn the bytes back into the text in SQL (`TASK_READ_COLUMNS` in backends/sqlite/task-row.ts); pg reads a
// uuid as its canonical text.

/**
 * A task id's 16 bytes, as SQLite stores it (a BLOB; codec `uuid`).
 *
 * @example
 * ```ts
 * uuidBytes('019abd2e-5f3a-7c41-9e2b-4f0a1c2d3e4f', 'task_id'); // <Buffer 01 9a bd 2e 5f 3a 7c 41 9e 2b 4f 0a 1c 2d 3e 4f>
 * ```
 * @throws Error naming the column when `id` is not a UUID in canonical lower-case text
 */
export function uuidBytes(id: string, column: string): Buffer {
  return Buffer.from(checkedTaskId(id, column).replaceAll('-', ''), 'hex');
}

/**
 * A task id given by a caller to look a task up by, as the value to bind: its bytes, or NULL for an id of another
 * form, which no stored task has (a comparison with NULL matches no row). For SQLite.
 */
export function taskIdKey(id: string): Buffer | null {
  return isTaskId(id) ? Buffer.from(id.replaceAll('-', ''), 'hex') : null;
}

/**
 * A task id given by a caller to look a task up by, as PostgreSQL's statements bind it (`$n::uuid`): the id itself,
 * or NULL for an id of another form, which no stored task has and which the uuid type would refuse with an error.
 */
export function taskIdText(id: string): string | null {
  return isTaskId(id) ? id : null;
}
