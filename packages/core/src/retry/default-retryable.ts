import { classifyHttpStatus } from '../http/classify-http.js';
import { isNetworkError, isTimeoutError } from '../http/network-errors.js';

const PROGRAMMING_ERRORS = [TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError];

/**
 * The default answer to "is this error worth another attempt?":
 * - a caller's abort (`AbortError`) — no: someone asked to stop;
 * - network errors (connection refused or reset, DNS try-again, …) and timeouts — yes;
 * - an explicit `retryable: boolean` property on the error — as it says;
 * - an HTTP status on the error (`status`, `statusCode` or `response.status`, as HTTP clients attach) — by the
 *   default retryable statuses (408, 425, 429, 5xx but 501 …);
 * - programming errors (`TypeError` that is not a network failure, `RangeError`, `SyntaxError`,
 *   `ReferenceError` …) — no: the same code fails the same way;
 * - any other error — yes.
 */
export function isRetryableError(error: unknown): boolean {
  if (isAbortError(error)) return false;
  if (isNetworkError(error) || isTimeoutError(error)) return true;
  if (typeof error === 'object' && error !== null) {
    const e = error as { retryable?: unknown; status?: unknown; statusCode?: unknown; response?: { status?: unknown } };
    if (typeof e.retryable === 'boolean') return e.retryable;
    const status = [e.status, e.statusCode, e.response?.status].find((s) => typeof s === 'number');
    if (typeof status === 'number' && status >= 100 && status <= 599) return classifyHttpStatus(status) === 'retryable';
  }
  for (const kind of PROGRAMMING_ERRORS) if (error instanceof kind) return false;
  return true;
}

/** True for the error an aborted `AbortSignal` produces by default (a `DOMException` named `AbortError`). */
export function isAbortError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
}
