import { DEFAULT_POLICY, assertValidPolicy } from '@retryd/core';
import axios, { type AxiosInstance } from 'axios';
import { ConcurrencyLimit } from '../shared/concurrency-limit.js';
import { OriginBreakers } from '../shared/origin-breakers.js';
import type { AxiosRetryOptions } from './axios-retry-options.js';
import { retryingAdapter, retryingAdapterContext } from './retrying-adapter.js';

/**
 * Makes every request of an axios instance retry, with the behaviour of `retryingFetch`: the policy's statuses and
 * network failures retried, `Retry-After` honoured up to `maxDelayMs` and the deadline, the same `Idempotency-Key` on
 * every attempt of a POST or PATCH, `totalBudgetMs` as the deadline (30 s when the policy names none: axios reads the
 * whole body before the adapter answers, so give a longer one for large downloads), a circuit breaker per origin, a
 * stream body sent once; plus at most
 * `maxConcurrentRetries` retries in flight for the instance. axios's own cancellation (`signal`, `cancelToken`) stops
 * the call, the waits between attempts included, with a `CanceledError`.
 *
 * It works at the adapter, below axios's interceptors: each of your interceptors runs once per request and sees the
 * final outcome; each attempt sends a fresh copy of the config. When the retries end on an HTTP error, that
 * `AxiosError` is thrown as axios would have thrown it; other give-ups throw core's `RetryExhaustedError`.
 *
 * @returns a function that detaches the retries again
 * @throws InvalidPolicyError naming the field and the rule when `options.policy` breaks one; RangeError naming
 *   `maxConcurrentRetries` when it is not an integer >= 1
 * @example
 * ```ts
 * const api = axios.create({ baseURL: 'https://api.example.com' });
 * attachRetry(api, { policy: { maxAttempts: 4, totalBudgetMs: 10_000 }, maxConcurrentRetries: 8 });
 * await api.post('/orders', order);
 * ```
 */
export function attachRetry(instance: AxiosInstance, options: AxiosRetryOptions = {}): () => void {
  const shared = retryingAdapterContext(
    options,
    new ConcurrencyLimit(options.maxConcurrentRetries ?? 10, 'maxConcurrentRetries'),
    options.breaker === false ? undefined : new OriginBreakers(options.breaker),
  );
  assertValidPolicy({ ...DEFAULT_POLICY, ...shared.policy });
  // A request interceptor, so that a per-request `adapter` is wrapped as well as the instance's default.
  const id = instance.interceptors.request.use(
    (config) => {
      config.adapter = retryingAdapter(axios.getAdapter(config.adapter, config), shared);
      return config;
    },
    undefined,
    { synchronous: true },
  );
  return () => instance.interceptors.request.eject(id);
}
