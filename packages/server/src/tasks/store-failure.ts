import { RetrydError } from '../domain/errors.js';
import { SOCKET_FAILURE_CODES } from '../store/store-errors.js';

/** Longest driver message repeated in a 503's detail. */
const MAX_DETAIL = 200;

/** System and driver codes that mean "the store cannot answer now", not "this request is wrong". */
const UNAVAILABLE_CODES = new Set([
  // Set by a store itself (the port's way to say it, whatever the driver).
  'STORE_UNAVAILABLE',
  // Sockets (PostgreSQL, Redis).
  ...SOCKET_FAILURE_CODES,
  // Files (SQLite, blobs).
  'ENOSPC',
  'EDQUOT',
  'EIO',
  'EROFS',
  'EMFILE',
  'ENFILE',
  // SQLite (better-sqlite3 puts the extended code on `code`: SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_FSYNC, ...).
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
  'SQLITE_NOMEM',
  'SQLITE_PROTOCOL',
  'SQLITE_INTERRUPT',
]);

/** PostgreSQL SQLSTATE classes: 08 connection exception, 53 insufficient resources, 57P0x shutdown. */
const UNAVAILABLE_SQLSTATE = /^(?:08...|53...|57P0[1-3])$/;

/** Messages of drivers that throw without a code. */
const UNAVAILABLE_MESSAGES = [
  'The database connection is not open', // better-sqlite3, after close()
  'Connection is closed', // ioredis
  "Stream isn't writeable", // ioredis, offline queue disabled
  'Connection terminated', // pg
];

/**
 * True when `error` says the store cannot answer now (connection refused or lost, database closed or
 * locked, disk full), so the request may succeed later; false for anything else (a bug, a constraint).
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (UNAVAILABLE_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code)) return true;
    if (UNAVAILABLE_CODES.has(code.replace(/^(SQLITE_[A-Z]+)_.*$/, '$1'))) return true;
  }
  if (name === 'MaxRetriesPerRequestError') return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.some((m) => message.includes(m));
}

/**
 * Turns a failure of the store (or of the blob store) into the error the API answers with:
 *
 * - a `RetrydError` passes through;
 * - an error coded `INVALID_CURSOR` (a cursor the store did not make) is a 400 naming `cursor`;
 * - an unavailable store ({@link isStoreUnavailable}) is 503 STORE_UNAVAILABLE, and the request may be sent
 *   again later (an enqueue with its idempotency key, so a write that did commit is replayed, not repeated);
 * - anything else is a bug: 500 INTERNAL (the original is the `cause`, logged by the HTTP layer).
 *
 * Stores make this work by throwing their driver's errors as they are, or an error with
 * `code: 'STORE_UNAVAILABLE'` when they know better.
 *
 * @param what - what was being done, for the detail: `read the task`, `enqueue`
 */
export function storeFailure(error: unknown, storeKind: string, what: string): RetrydError {
  if (error instanceof RetrydError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'INVALID_CURSOR') {
    const rule = 'a nextCursor returned by the same listing';
    return RetrydError.validation([{ field: 'cursor', rule, message: `cursor must be ${rule}` }]);
  }
  if (!isStoreUnavailable(error)) {
    return new RetrydError('INTERNAL', `the ${storeKind} store failed to ${what}; the error has been logged`, undefined, {
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  const short = message.length > MAX_DETAIL ? `${message.slice(0, MAX_DETAIL - 3)}...` : message;
  return new RetrydError(
    'STORE_UNAVAILABLE',
    `The ${storeKind} store could not ${what}${typeof code === 'string' ? ` (${code})` : ''}: ${short}. ` +
      'Try again later; an enqueue sent again with the same idempotency key cannot create a second task.',
    undefined,
    { cause: error },
  );
}

/**
 * Runs a store call and maps its failure with {@link storeFailure}. Also catches a synchronous throw (a
 * driver that fails before returning its promise).
 */
export async function callStore<T>(storeKind: string, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw storeFailure(error, storeKind, what);
  }
}
