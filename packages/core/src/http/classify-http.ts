import { DEFAULT_RETRYABLE_STATUS_CODES } from '../policy/retry-policy.js';
import { parseRetryAfter } from '../retry-after/parse-retry-after.js';
import { headerValue, type HeadersLike } from './headers.js';
import { HttpOutcome } from './http-outcome.js';

/**
 * What an HTTP status means for retrying:
 * - 2xx → `success`, always, even if a custom list names a 2xx status, and so is a status in `successStatusCodes`
 *   (a policy's `successStatusCodes`: a 409 from a downstream that already processed the key);
 * - a status in `retryableStatusCodes` → `retryable`;
 * - everything else → `permanent`: other 4xx, 501 Not Implemented, 1xx, and 3xx, because redirects are
 *   not followed here (a client that follows them never hands one over) and a 3xx that reaches this point
 *   did not do what the caller asked.
 *
 * @param status - the response status
 * @param retryableStatusCodes - default {@link DEFAULT_RETRYABLE_STATUS_CODES} (408, 425, 429, 500, 502, 503, 504);
 *   pass `retryableStatusCodesOf(policy)` to honour a policy's own list
 * @param successStatusCodes - statuses besides 2xx that succeed; default none (`successStatusCodesOf(policy)`)
 * @example
 * ```ts
 * classifyHttpStatus(503); // 'retryable'
 * classifyHttpStatus(404); // 'permanent'
 * classifyHttpStatus(409, [409, 503]); // 'retryable'
 * ```
 */
export function classifyHttpStatus(
  status: number,
  retryableStatusCodes: readonly number[] = DEFAULT_RETRYABLE_STATUS_CODES,
  successStatusCodes: readonly number[] = NO_CODES,
): HttpOutcome {
  if (Number.isInteger(status) && status >= 200 && status <= 299) return HttpOutcome.SUCCESS;
  if (successStatusCodes.length > 0 && successStatusCodes.includes(status)) return HttpOutcome.SUCCESS;
  return retryableStatusCodes.includes(status) ? HttpOutcome.RETRYABLE : HttpOutcome.PERMANENT;
}

const NO_CODES: readonly number[] = Object.freeze([]);

/** Options of {@link classifyHttpResponse}. */
export interface ClassifyHttpResponseOptions {
  /** Statuses worth retrying. Default {@link DEFAULT_RETRYABLE_STATUS_CODES}. */
  retryableStatusCodes?: readonly number[] | undefined;
  /** Statuses besides 2xx that count as success. Default none. */
  successStatusCodes?: readonly number[] | undefined;
  /** The current time in epoch ms, to turn a Retry-After date into a delay. Default `Date.now()`. */
  nowMs?: number | undefined;
}

/** The result of {@link classifyHttpResponse}. */
export interface HttpClassification {
  outcome: HttpOutcome;
  /**
   * The delay in ms the server's `Retry-After` asks for (see `parseRetryAfter`). Present only when the
   * outcome is `retryable` and the header is present and valid.
   */
  retryAfterMs?: number;
}

/**
 * Classifies a response by its status (see {@link classifyHttpStatus}) and, when it is worth retrying,
 * reads the delay its `Retry-After` header asks for. Retry-After on a success or a permanent failure is
 * ignored: it does not make a 404 worth retrying.
 *
 * @param response - a `status` and, optionally, `headers` in any {@link HeadersLike} shape: a `fetch`
 *   Response as it is, or `{ status: statusCode, headers }` from undici's `request`
 * @param options - the statuses to retry and the current time; see {@link ClassifyHttpResponseOptions}
 * @example
 * ```ts
 * const res = await fetch(url); // 503 with Retry-After: 120
 * classifyHttpResponse(res, { nowMs: clock.now() }); // { outcome: 'retryable', retryAfterMs: 120000 }
 * ```
 */
export function classifyHttpResponse(
  response: { status: number; headers?: HeadersLike | undefined },
  options: ClassifyHttpResponseOptions = {},
): HttpClassification {
  const outcome = classifyHttpStatus(response.status, options.retryableStatusCodes, options.successStatusCodes);
  if (outcome !== HttpOutcome.RETRYABLE) return { outcome };
  const retryAfterMs = parseRetryAfter(headerValue(response.headers, 'retry-after'), options.nowMs ?? Date.now());
  return retryAfterMs === undefined ? { outcome } : { outcome, retryAfterMs };
}
