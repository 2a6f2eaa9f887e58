/**
 * What a call's result means for retrying it.
 *
 * - `success`: done, do not retry.
 * - `retryable`: a failure that may well pass on a later attempt (a 503, a reset connection, a timeout).
 * - `permanent`: a failure that will happen again (a 400, a 404, a bug in the caller), or a caller's abort.
 *
 * @example
 * ```ts
 * if (classifyHttpStatus(res.status) === HttpOutcome.RETRYABLE) { ... }
 * ```
 */
export const HttpOutcome = {
  SUCCESS: 'success',
  RETRYABLE: 'retryable',
  PERMANENT: 'permanent',
} as const;
export type HttpOutcome = (typeof HttpOutcome)[keyof typeof HttpOutcome];
