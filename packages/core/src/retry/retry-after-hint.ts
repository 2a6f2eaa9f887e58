import { headerValue, type HeadersLike } from '../http/headers.js';
import { parseRetryAfter } from '../retry-after/parse-retry-after.js';

/**
 * The default way `retry()` finds a Retry-After hint on a failure or a retryable result, in ms:
 * a numeric `retryAfterMs` property (set it on your own errors), else a `Retry-After` header on the value's
 * `headers` or `response.headers` (fetch `Response`, undici, axios errors). `nowMs` is wall-clock time,
 * which the HTTP-date form needs.
 */
export function retryAfterHint(value: unknown, nowMs: number): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { retryAfterMs?: unknown; headers?: unknown; response?: { headers?: unknown } };
  if (typeof v.retryAfterMs === 'number' && Number.isFinite(v.retryAfterMs) && v.retryAfterMs >= 0) return v.retryAfterMs;
  const headers = (v.headers ?? v.response?.headers) as HeadersLike | undefined;
  if (!headers || typeof headers !== 'object') return undefined;
  return parseRetryAfter(headerValue(headers, 'retry-after'), nowMs);
}
