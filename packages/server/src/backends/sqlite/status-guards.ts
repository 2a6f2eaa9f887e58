import { isLive, type TaskStatus } from '@retryd/core';

// The statuses that the SQLite store's statements name (see store/transition-guards.ts), written into SQL text: a
// change to the lifecycle changes every guard with it. A status is kept as a small number (010-task-keys-as-numbers.sql:
// a 0 or 1 takes no byte beyond the record header's, a name 7 to 9). The partial indexes of the migrations
// necessarily spell PENDING's and IN_FLIGHT's numbers out; the store's test checks that the planner still picks them.

/** Each status's number in `tasks.status` (010-task-keys-as-numbers.sql repeats them, and may never change). */
export const STATUS_CODES: Readonly<Record<TaskStatus, number>> = Object.freeze({
  PENDING: 0,
  IN_FLIGHT: 1,
  SUCCEEDED: 2,
  FAILED: 3,
  EXHAUSTED: 4,
  CANCELLED: 5,
});

/** The status of each number of {@link STATUS_CODES}, by number. */
export const STATUS_OF_CODE: readonly TaskStatus[] = Object.freeze(
  (Object.entries(STATUS_CODES) as [TaskStatus, number][]).sort((a, b) => a[1] - b[1]).map(([status]) => status),
);

/**
 * The status kept as `code`.
 *
 * @throws Error for a number that is no status's (a row that no statement of this store wrote)
 */
export function statusOfCode(code: number): TaskStatus {
  const status = STATUS_OF_CODE[code];
  if (status === undefined) throw new Error(`tasks.status: expected a status number 0 to ${STATUS_OF_CODE.length - 1}, got ${code}.`);
  return status;
}

/**
 * `status`'s number, for a parameter.
 *
 * @throws Error for a value that is not a {@link TaskStatus}
 */
export function statusCode(status: TaskStatus): number {
  if (!Object.hasOwn(STATUS_CODES, status)) throw new Error(`Unknown task status ${JSON.stringify(status)}.`);
  return STATUS_CODES[status];
}

/**
 * `status = 0` or `status IN (2, 3)` (the statuses' numbers) for a statement's WHERE (one status is written with
 * `=`, which a partial index's `status = …` condition is then sure to match).
 *
 * @param column - default `status`
 * @throws Error for an empty list or a value that is not a {@link TaskStatus} (values are written into the SQL)
 */
export function statusIn(statuses: readonly TaskStatus[], column = 'status'): string {
  if (statuses.length === 0) throw new Error('A status guard needs at least one status.');
  const quoted = statuses.map(statusLiteral);
  return quoted.length === 1 ? `${column} = ${quoted[0]}` : `${column} IN (${quoted.join(', ')})`;
}

/** `status`'s number as an SQL literal. @throws Error for a value that is not a {@link TaskStatus} */
export function statusLiteral(status: TaskStatus): string {
  return String(statusCode(status));
}

/**
 * The SET term that keeps `ended_at` right for a move to `status` (see 001-init.sql): NULL for a live status,
 * `value` (an SQL expression, usually a parameter) for a terminal one.
 */
export function endedAtFor(status: TaskStatus, value: string): string {
  return `ended_at = ${isLive(status) ? 'NULL' : value}`;
}
