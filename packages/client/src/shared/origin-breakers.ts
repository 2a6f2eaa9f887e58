import { CircuitBreaker, type CircuitBreakerOptions } from '@retryd/core';
import { memoByString } from './string-memo.js';

/**
 * One {@link CircuitBreaker} per origin (`https://api.example.com:8443`), made on first use: a failing downstream
 * opens its own circuit and leaves calls to the others alone.
 *
 * Origins are kept for the life of the object; a client calls a handful of them, so there is no eviction.
 */
export class OriginBreakers {
  readonly #breakers = new Map<string, CircuitBreaker>();

  constructor(private readonly options: CircuitBreakerOptions | undefined) {}

  /** The breaker of `url`'s origin. */
  forUrl(url: string | URL): CircuitBreaker {
    return this.forOrigin(typeof url === 'string' ? originOf(url) : url.origin);
  }

  /**
   * The breaker of an origin named by the caller: for calls whose address is no http(s) URL (a gRPC channel's target,
   * whose `new URL(…).origin` would be `'null'` for every one of them).
   */
  forOrigin(origin: string): CircuitBreaker {
    let breaker = this.#breakers.get(origin);
    if (breaker === undefined) {
      breaker = new CircuitBreaker(this.options);
      this.#breakers.set(origin, breaker);
    }
    return breaker;
  }
}

/** The origin of an absolute URL, remembered for the URLs called most (parsing one costs more than the rest of the lookup). */
const originOf = memoByString((url: string): string => {
  try {
    return new URL(url).origin;
  } catch {
    // A relative URL (a browser's fetch('/x')) has the page's origin: one breaker for all of them is right.
    return '';
  }
});
