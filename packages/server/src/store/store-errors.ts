/**
 * Thrown for a `cursor` the store did not make (edited, truncated, or from another listing).
 * The HTTP layer answers it with 400.
 */
export class InvalidCursorError extends Error {
  readonly code = 'INVALID_CURSOR';
  constructor(message = 'Expected `cursor` to be a value returned as `nextCursor` by the same listing.') {
    super(message);
    this.name = 'InvalidCursorError';
  }
}

/**
 * Thrown by `completeAttempts` when an attempt number is already in a task's log. The whole call is rolled
 * back (no completion of it is applied): recording an attempt twice is an engine bug, never a race, since
 * every claim raises the fencing token.
 */
export class DuplicateAttemptError extends Error {
  readonly code = 'DUPLICATE_ATTEMPT';
  readonly taskId: string;
  readonly attemptNumber: number;
  constructor(taskId: string, attemptNumber: number, options?: ErrorOptions) {
    super(`Attempt ${attemptNumber} of task ${taskId} is already recorded.`, options);
    this.name = 'DuplicateAttemptError';
    this.taskId = taskId;
    this.attemptNumber = attemptNumber;
  }
}

/**
 * Socket error codes that mean a networked store's server is down, restarting or unreachable (not that a call was
 * refused): the stores turn them into `STORE_UNAVAILABLE`, and the API answers them with 503.
 */
export const SOCKET_FAILURE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
