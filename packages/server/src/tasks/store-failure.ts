import { RetrydError } from '../domain/errors.js';
import { StoreUnavailableError, isStoreUnavailable } from '../store/store-errors.js';

export { isStoreUnavailable };

/** Longest driver message repeated in a 503's detail. */
const MAX_DETAIL = 200;

/**
 * Turns a failure of the store (or of the blob store) into the error the API answers with:
 *
 * - a `RetrydError` passes through;
 * - an error coded `INVALID_CURSOR` (a cursor the store did not make) is a 400 naming `cursor`;
 * - an unavailable store ({@link isStoreUnavailable}: the port's `STORE_UNAVAILABLE`) is 503 STORE_UNAVAILABLE, and the
 *   request may be sent again later (an enqueue with its idempotency key, so a write that did commit is replayed,
 *   not repeated);
 * - anything else is a bug: 500 INTERNAL (the original is the `cause`, logged by the HTTP layer).
 *
 * The stores make this work: each backend turns its driver's failures into the port's errors where they arise
 * (`StoreUnavailableError`, `StoreFullError` of store/store-errors.ts, see store/failure-boundary.ts), so nothing
 * here knows a driver.
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
  // The driver's own code when a backend named one (SQLITE_BUSY, ECONNREFUSED), else the error's.
  const shown = error instanceof StoreUnavailableError ? error.reason : code;
  return new RetrydError(
    'STORE_UNAVAILABLE',
    `The ${storeKind} store could not ${what}${typeof shown === 'string' ? ` (${shown})` : ''}: ${short}. ` +
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
