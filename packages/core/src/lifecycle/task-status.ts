/**
 * Where a durable task stands. Each value equals its key, so statuses read the same in code, in a
 * database column and in the service's JSON. Moves between them are the table {@link TASK_TRANSITIONS}.
 *
 * - `PENDING`: waiting for its next attempt (`nextAttemptAt`).
 * - `IN_FLIGHT`: claimed by a worker that holds its lease and is making an attempt.
 * - `SUCCEEDED`: an attempt succeeded. Final.
 * - `FAILED`: an attempt failed permanently (e.g. a 400). An operator may replay it.
 * - `EXHAUSTED`: every attempt the policy allows failed, or the budget ran out. An operator may replay it.
 * - `CANCELLED`: cancelled by a caller. Final.
 *
 * @example
 * ```ts
 * if (task.status === TaskStatus.PENDING) { ... }
 * ```
 */
export const TaskStatus = {
  PENDING: 'PENDING',
  IN_FLIGHT: 'IN_FLIGHT',
  SUCCEEDED: 'SUCCEEDED',
  FAILED: 'FAILED',
  EXHAUSTED: 'EXHAUSTED',
  CANCELLED: 'CANCELLED',
} as const;
export type TaskStatus = (typeof TaskStatus)[keyof typeof TaskStatus];

/**
 * What can happen to a task; {@link transition} says which status each event leads to.
 *
 * - `claim`: a worker takes a due task and its lease.
 * - `succeed` / `fail` / `retry` / `exhaust`: the outcome of an attempt, as the engine decided it.
 * - `cancel`: a caller cancels the task.
 * - `lease_expired`: the worker holding the lease went silent; the lease reaper hands the task back.
 * - `replay`: an operator runs a failed or exhausted task again.
 * - `reschedule`: an operator moves a waiting task's next attempt (run it now, or at a given time); it stays PENDING,
 *   with its attempt count and its budget as they were.
 *
 * @example
 * ```ts
 * transition(TaskStatus.PENDING, TaskEvent.CLAIM); // 'IN_FLIGHT'
 * ```
 */
export const TaskEvent = {
  CLAIM: 'claim',
  SUCCEED: 'succeed',
  RETRY: 'retry',
  FAIL: 'fail',
  EXHAUST: 'exhaust',
  CANCEL: 'cancel',
  LEASE_EXPIRED: 'lease_expired',
  REPLAY: 'replay',
  RESCHEDULE: 'reschedule',
} as const;
export type TaskEvent = (typeof TaskEvent)[keyof typeof TaskEvent];
