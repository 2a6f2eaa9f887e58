import { DuplicateAttemptError, SOCKET_FAILURE_CODES } from '../../store/store-errors.js';

/**
 * A call could not reach PostgreSQL (connection refused, lost mid-call, or no connection within
 * `connectTimeoutMs`). Coded `STORE_UNAVAILABLE`, which the API answers with 503; the pool opens new
 * connections by itself once the server is back. The driver's error is the `cause`.
 */
export class PostgresUnavailableError extends Error {
  readonly code = 'STORE_UNAVAILABLE';
  constructor(cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`PostgreSQL is unreachable: ${reason}`, { cause });
    this.name = 'PostgresUnavailableError';
  }
}

/** Messages of pg and pg-pool errors that carry no code. */
const LOST_CONNECTION =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended/i;

/**
 * PostgreSQL's own SQLSTATEs for an unavailable server: class 08 (connection exception), 57P01-57P03 (admin
 * shutdown, crash shutdown, cannot connect now, e.g. while starting or in recovery).
 */
const UNAVAILABLE_SQLSTATE = /^(?:08...|57P0[1-3])$/;

/** True when `error` means the server could not answer (as opposed to a refused statement). */
export function isConnectionFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (SOCKET_FAILURE_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
  return typeof message === 'string' && LOST_CONNECTION.test(message);
}

/**
 * The error a store call rejects with: a connection failure becomes {@link PostgresUnavailableError}; a
 * second record of one attempt (`attempts_pkey`) becomes `DuplicateAttemptError`; anything else (a bug, a
 * CHECK) passes through as pg raised it.
 */
export function storeError(error: unknown): unknown {
  if (error instanceof PostgresUnavailableError) return error;
  if (isConnectionFailure(error)) return new PostgresUnavailableError(error);
  const { code, constraint, detail } = error as { code?: unknown; constraint?: unknown; detail?: unknown };
  if (code === '23505' && constraint === 'attempts_pkey') {
    // detail: Key (tenant_id, task_id, attempt_number)=(default, 4f1c..., 2) already exists.
    const key = typeof detail === 'string' ? /, ([^,]*), (\d+)\) already exists/.exec(detail) : null;
    return new DuplicateAttemptError(key?.[1] ?? 'unknown', Number(key?.[2] ?? Number.NaN), { cause: error });
  }
  return error;
}
