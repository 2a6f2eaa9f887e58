import { DuplicateAttemptError, SOCKET_FAILURE_CODES, StoreFullError, StoreUnavailableError } from '../../store/store-errors.js';

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

/** SQLSTATE 53100, disk full. */
const DISK_FULL = '53100';

/** SQLSTATE class 53, insufficient resources (disk full, out of memory, too many connections). */
const INSUFFICIENT_RESOURCES = /^53...$/;

/**
 * The PostgreSQL store's errors as the port's, at its boundary (its classes' methods, or the store's `#run`): what
 * {@link storeError} made of a failure passes; a full disk (53100) is `StoreFullError`; a server out of resources
 * (class 53), unreachable (a socket code, class 08, 57P01-57P03) or a connection ended under a call is
 * `StoreUnavailableError`, with pg's message and code as they were. Anything else passes through as pg raised it.
 */
export function postgresFailure(error: unknown): unknown {
  if (typeof error !== 'object' || error === null || (error as { code?: unknown }).code === 'STORE_UNAVAILABLE') return error;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === DISK_FULL) return StoreFullError.of(error);
  if (typeof code === 'string' && (SOCKET_FAILURE_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code) || INSUFFICIENT_RESOURCES.test(code))) {
    return StoreUnavailableError.of(error);
  }
  if (typeof message === 'string' && message.includes('Connection terminated')) return StoreUnavailableError.of(error);
  return error;
}

/**
 * A failure of the PostgreSQL store's statements as the port will see it: {@link storeError}, then the rest of the
 * boundary's rules ({@link postgresFailure}). What `PostgresStore`'s `#run` throws.
 */
export function postgresStoreError(error: unknown): unknown {
  return postgresFailure(storeError(error));
}
