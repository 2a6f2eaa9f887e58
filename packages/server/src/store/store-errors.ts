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

/**
 * The store cannot answer now (its server is down or unreachable, its file locked or failing, its connection closed),
 * so the same call may succeed later. A backend throws it for its driver's own way of saying so; the API answers it
 * with 503 STORE_UNAVAILABLE. The message is the driver's, as it said it.
 */
export class StoreUnavailableError extends Error {
  readonly code = 'STORE_UNAVAILABLE';
  /** The driver's or the system's code for the failure (`ECONNREFUSED`, `SQLITE_BUSY`, `57P01`), when it gave one. */
  readonly reason: string | undefined;
  constructor(message: string, options?: ErrorOptions & { reason?: string | undefined }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
    this.reason = options?.reason;
  }

  /** `driverError` as the port's error: its message, its code as the {@link reason}, and itself as the `cause`. */
  static of<E extends StoreUnavailableError>(this: new (message: string, options?: ErrorOptions & { reason?: string | undefined }) => E, driverError: unknown): E {
    const { code } = (driverError ?? {}) as { code?: unknown };
    const message = driverError instanceof Error ? driverError.message : String(driverError);
    return new this(message, { cause: driverError, reason: typeof code === 'string' ? code : undefined });
  }
}

/** The store's disk or quota is full (`ENOSPC`, `SQLITE_FULL`, PostgreSQL's 53100): unavailable until space is freed. */
export class StoreFullError extends StoreUnavailableError {
  constructor(message: string, options?: ErrorOptions & { reason?: string | undefined }) {
    super(message, options);
    this.name = 'StoreFullError';
  }
}

/**
 * True when `error` says a store (or a blob store) cannot answer now: coded `STORE_UNAVAILABLE` (the port's errors), or
 * with one of the system's own codes for a socket or a file that failed ({@link SOCKET_FAILURE_CODES},
 * {@link FULL_DISK_CODES}, {@link FILE_FAILURE_CODES}), which are Node's, not a driver's. A driver's codes and
 * messages (SQLite's, PostgreSQL's SQLSTATEs, ioredis's) are its backend's to name.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code } = error as { code?: unknown };
  if (typeof code !== 'string') return false;
  return code === 'STORE_UNAVAILABLE' || SOCKET_FAILURE_CODES.has(code) || FULL_DISK_CODES.has(code) || FILE_FAILURE_CODES.has(code);
}

/** File system codes that mean the disk is full: the store is unavailable until space is freed. */
export const FULL_DISK_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT']);

/** File system codes that mean a store's files cannot be read or written now. */
export const FILE_FAILURE_CODES: ReadonlySet<string> = new Set(['EIO', 'EROFS', 'EMFILE', 'ENFILE']);
