import type { TaskEvent, TaskStatus } from './task-status.js';

/**
 * Thrown by {@link transition} when the lifecycle table has no move for an event in a status, e.g. a
 * `retry` for a task that already `SUCCEEDED`. It names both, so the log says which rule was broken.
 *
 * @example
 * ```ts
 * try { transition('SUCCEEDED', 'retry'); } catch (e) {
 *   if (e instanceof IllegalTransitionError) e.message; // 'cannot apply event "retry" to a task in status SUCCEEDED'
 * }
 * ```
 */
export class IllegalTransitionError extends Error {
  override readonly name = 'IllegalTransitionError';
  readonly code = 'ILLEGAL_TRANSITION';

  constructor(
    /** The status the task was in. */
    readonly status: TaskStatus,
    /** The event that has no move from that status. */
    readonly event: TaskEvent,
  ) {
    super(`cannot apply event "${event}" to a task in status ${status}`);
  }
}
