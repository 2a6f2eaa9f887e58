import type { CircuitBreaker, RetryOptions } from '@retryd/core';
import { copyWith } from './copy-with.js';

/**
 * The retry options of a client's calls with each origin's breaker added, made once per breaker instead of copied on
 * every call: a call without a signal of its own (the usual one) needs nothing else in them, and `retry` only reads
 * its options, so the calls to one origin can share one object. A copy per call was a few objects and an
 * `Object.assign` on every first try, for the same contents each time.
 *
 * Holds one entry per breaker, as long as the breakers themselves are kept (one per origin called).
 *
 * @example
 * ```ts
 * const withBreaker = new BreakerRetryOptions(plan.retryOptions);
 * const options = withBreaker.for(breakers.forUrl(url)); // the same object for every call to that origin
 * ```
 */
export class BreakerRetryOptions<T> {
  // Made on first use: `retryingFetch` (without `createRetryingFetch`) works its options out on every call.
  #made: Map<CircuitBreaker, RetryOptions<T>> | undefined;

  /** @param base - every call's retry options but the signal and the breaker; read once per breaker, not kept in sync */
  constructor(private readonly base: RetryOptions<T>) {}

  /** `base` with `breaker`; the caller must not change the object it gets (it is shared). */
  for(breaker: CircuitBreaker): RetryOptions<T> {
    const made = (this.#made ??= new Map());
    let options = made.get(breaker);
    if (options === undefined) {
      options = copyWith(this.base, { breaker });
      made.set(breaker, options);
    }
    return options;
  }
}
