import type { RetryOptions } from '@retryd/core';
import type { RetryingFetchOptions } from '../fetch/retrying-fetch-options.js';

/**
 * `retryOptions` with what the caller gave of `onAttempt`, `clock`, `random` and `wallClock` (an option left out keeps
 * core's default, so it is not set at all): what every call of one retrying fetch or axios instance shares.
 */
export function withCallerHooks<T>(
  retryOptions: RetryOptions<T>,
  options: Pick<RetryingFetchOptions, 'onAttempt' | 'clock' | 'random' | 'wallClock'>,
): RetryOptions<T> {
  if (options.onAttempt !== undefined) retryOptions.onAttempt = options.onAttempt;
  if (options.clock !== undefined) retryOptions.clock = options.clock;
  if (options.random !== undefined) retryOptions.random = options.random;
  if (options.wallClock !== undefined) retryOptions.wallClock = options.wallClock;
  return retryOptions;
}
