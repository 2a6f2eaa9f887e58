import { TaskStatus, isLive } from '@retryd/core';

// The statuses that the SQLite store's statements name (see store/transition-guards.ts), written into SQL text: a
// change to the lifecycle changes every guard with it. The partial indexes of the migrations necessarily spell
// `'PENDING'` and `'IN_FLIGHT'` out; the store's test checks that the planner still picks them.

const KNOWN = new Set<string>(Object.values(TaskStatus));

/**
 * `status = 'A'` or `status IN ('A', 'B')` for a statement's WHERE (one status is written with `=`, which a partial
 * index's `status = '…'` condition is then sure to match).
 *
 * @param column - default `status`
 * @throws Error for an empty list or a value that is not a {@link TaskStatus} (values are written into the SQL)
 */
export function statusIn(statuses: readonly TaskStatus[], column = 'status'): string {
  if (statuses.length === 0) throw new Error('A status guard needs at least one status.');
  const quoted = statuses.map(statusLiteral);
  return quoted.length === 1 ? `${column} = ${quoted[0]}` : `${column} IN (${quoted.join(', ')})`;
}

/** `'STATUS'`, as an SQL literal. @throws Error for a value that is not a {@link TaskStatus} */
export function statusLiteral(status: TaskStatus): string {
  if (!KNOWN.has(status)) throw new Error(`Unknown task status ${JSON.stringify(status)}.`);
  return `'${status}'`;
}

/**
 * The SET term that keeps `ended_at` right for a move to `status` (see 001-init.sql): NULL for a live status,
 * `value` (an SQL expression, usually a parameter) for a terminal one.
 */
export function endedAtFor(status: TaskStatus, value: string): string {
  return `ended_at = ${isLive(status) ? 'NULL' : value}`;
}
