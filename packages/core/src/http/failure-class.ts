import { isConnectionRefused, isTimeoutError } from './network-errors.js';

/**
 * The kinds of retryable failure a policy may give its own backoff schedule (`RetryPolicy.backoffByClass`):
 *
 * - `rateLimited`: HTTP 429 Too Many Requests — the server asks for less traffic, so wait longer;
 * - `serverError`: any 5xx (504 Gateway Timeout included: the answer came from a server);
 * - `timeout`: the call got no answer in time ({@link isTimeoutError}: `AbortSignal.timeout()`, ETIMEDOUT, undici's
 *   connect, headers and body timeouts);
 * - `connectionRefused`: nothing listens (ECONNREFUSED) — a process restarting, usually back in seconds.
 *
 * Every other retryable failure (408, 425, a reset connection, a DNS try-again, …) belongs to no class and takes
 * the policy's main schedule.
 */
export const FailureClass = {
  RATE_LIMITED: 'rateLimited',
  SERVER_ERROR: 'serverError',
  TIMEOUT: 'timeout',
  CONNECTION_REFUSED: 'connectionRefused',
} as const;
export type FailureClass = (typeof FailureClass)[keyof typeof FailureClass];

/**
 * The failure class of an HTTP status: 429 → `rateLimited`, 500–599 → `serverError`, anything else → undefined.
 * Whether the status is retried at all is the policy's `retryableStatusCodes`' business, not this.
 *
 * @example
 * ```ts
 * failureClassOfStatus(429); // 'rateLimited'
 * failureClassOfStatus(408); // undefined: the main schedule
 * ```
 */
export function failureClassOfStatus(status: number): FailureClass | undefined {
  if (status === 429) return FailureClass.RATE_LIMITED;
  if (status >= 500 && status <= 599) return FailureClass.SERVER_ERROR;
  return undefined;
}

/**
 * The failure class of a thrown error: a timeout ({@link isTimeoutError}) → `timeout`; a refused connection
 * (ECONNREFUSED, anywhere in the `cause` chain) → `connectionRefused`; else undefined.
 *
 * @example
 * ```ts
 * try { await fetch('http://127.0.0.1:1/'); } catch (e) { failureClassOfError(e); } // 'connectionRefused'
 * ```
 */
export function failureClassOfError(error: unknown): FailureClass | undefined {
  if (isTimeoutError(error)) return FailureClass.TIMEOUT;
  if (isConnectionRefused(error)) return FailureClass.CONNECTION_REFUSED;
  return undefined;
}

/**
 * The failure class of whatever a failed attempt left: a value carrying an HTTP status (a `fetch` Response, an
 * HTTP client's error with `status`, `statusCode` or `response.status`) is classed by that status
 * ({@link failureClassOfStatus}); anything else as an error ({@link failureClassOfError}). `retry()`'s default.
 *
 * @example
 * ```ts
 * failureClassOf(await fetch(url)); // 'serverError' for a 503
 * failureClassOf(new DOMException('late', 'TimeoutError')); // 'timeout'
 * ```
 */
export function failureClassOf(failure: unknown): FailureClass | undefined {
  if (typeof failure === 'object' && failure !== null) {
    const f = failure as { status?: unknown; statusCode?: unknown; response?: { status?: unknown } | null };
    const status = typeof f.status === 'number' ? f.status : typeof f.statusCode === 'number' ? f.statusCode : f.response?.status;
    if (typeof status === 'number') return failureClassOfStatus(status);
  }
  return failureClassOfError(failure);
}
