// A task id is a UUID in its canonical lower-case text, as the service makes it (tasks/uuid-v7.ts). The SQL stores
// keep its 16 bytes (codec `uuid`, domain/task-fields.ts), which read back as exactly that text: any other spelling of
// the same UUID (upper case, no hyphens, braces) would come back changed, and any other text would not fit. So a task
// is only ever written with an id in this form, and a look-up by an id in any other form finds nothing.
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Whether `id` has the form every task id has: a UUID as 36 characters, lower-case hex digits in groups of 8, 4, 4,
 * 4 and 12 joined by hyphens. Any version and variant (the service makes version 7).
 *
 * @example
 * ```ts
 * isTaskId('019abd2e-5f3a-7c41-9e2b-4f0a1c2d3e4f'); // true
 * isTaskId('019ABD2E-5F3A-7C41-9E2B-4F0A1C2D3E4F'); // false: upper case would read back in lower case
 * ```
 */
export function isTaskId(id: string): boolean {
  return CANONICAL_UUID.test(id);
}

/**
 * `id` itself when it is a task id (see {@link isTaskId}), for a store writing one.
 *
 * @param column - the column or field being written, for the error
 * @throws Error naming the column and the rule when `id` has another form
 */
export function checkedTaskId(id: string, column: string): string {
  if (!isTaskId(id)) throw taskIdError(id, column);
  return id;
}

/** The error for a task id written in another form than {@link isTaskId}'s, naming the column and the rule. */
export function taskIdError(id: string, column: string): Error {
  return new Error(`${column}: expected a UUID in lower-case hex with hyphens (8-4-4-4-12 digits), got ${JSON.stringify(id)}.`);
}
