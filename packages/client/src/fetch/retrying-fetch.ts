import {
  DEFAULT_POLICY,
  assertValidPolicy,
  HttpOutcome,
  RetryableResultError,
  RetryExhaustedError,
  classifyHttpStatus,
  isRetryableError,
  retry,
  retryableStatusCodesOf,
  type AttemptContext,
  type RetryOptions,
  type RetryPolicy,
} from '@retryd/core';
import { BodyNotReplayableError } from '../shared/body-not-replayable-error.js';
import { BreakerRetryOptions } from '../shared/breaker-retry-options.js';
import { withCallerHooks } from '../shared/caller-hooks.js';
import { copyWith } from '../shared/copy-with.js';
import { IN_REQUEST_DEADLINE_MS, withDefaultDeadline } from '../shared/default-deadline.js';
import { isBrowserNetworkError } from '../shared/browser-network-error.js';
import { DEFAULT_KEYED_METHODS, IDEMPOTENCY_KEY_HEADER } from '../shared/keyed-methods.js';
import { OriginBreakers } from '../shared/origin-breakers.js';
import { requestKey } from '../shared/request-key.js';
import type { RetryingFetchOptions } from './retrying-fetch-options.js';
import { plainReplayableRequest, replayableRequest, type FetchInput, type ReplayableRequest } from './replayable-request.js';

/** The standard `fetch` signature. */
export type FetchFunction = (input: FetchInput, init?: RequestInit) => Promise<Response>;

/** What a network failure or an unreachable host looks like in Node and in browsers alike. */
const defaultRetryOnError = (error: unknown): boolean => isRetryableError(error) || isBrowserNetworkError(error);

/**
 * A `fetch` that retries, with the standard signature:
 *
 * - retried: network failures and the policy's `retryableStatusCodes`; a `Retry-After` replaces the computed delay,
 *   and one longer than the policy's `maxDelayMs` or landing past its `totalBudgetMs` ends the retries at once
 *   (`retry_after_beyond_budget`);
 * - POST and PATCH carry the same `Idempotency-Key` on every attempt: the caller's header, else one derived once from
 *   the method, URL and body (`deriveIdempotencyKey`; a random UUID per call where it cannot be derived, as in browsers);
 * - `totalBudgetMs` is the deadline of the whole call, 30 s when the policy names none ({@link IN_REQUEST_DEADLINE_MS}):
 *   the attempt still waiting for its response when it runs out is aborted through its `AbortSignal`; the caller's
 *   `init.signal` cancels the call, sleeps included;
 * - a circuit breaker per origin fails calls fast (`BrokenCircuitError`) while a downstream is down;
 * - the body is sent again on each attempt (a `Request`'s body and `FormData` are buffered once); a stream body goes
 *   out once, and a failure that would have been retried rejects with a {@link BodyNotReplayableError}.
 *
 * When the retries end on a retryable status, the last `Response` is returned, as `fetch` returns any status; every
 * other give-up rejects with core's `RetryExhaustedError` (`reason`, `attempts`, `lastError`).
 *
 * @throws InvalidPolicyError naming the field and the rule when `options.policy` breaks one
 * @example
 * ```ts
 * const fetchOrders = createRetryingFetch({ policy: { maxAttempts: 4, totalBudgetMs: 5_000 } });
 * const res = await fetchOrders('https://api.example.com/orders', { method: 'POST', body: JSON.stringify(order) });
 * ```
 */
export function createRetryingFetch(options: RetryingFetchOptions = {}): FetchFunction {
  // Options are read once: what every call of this fetch shares is made here, not per call.
  const plan = callPlan(options);
  // A wrong policy fails here, at set-up, naming the field, rather than at the first call.
  assertValidPolicy({ ...DEFAULT_POLICY, ...plan.policy });
  const breakers = options.breaker === false ? undefined : new OriginBreakers(options.breaker);
  return (input, init) => fetchWithRetry(input, init, plan, breakers);
}

const sharedBreakers = new OriginBreakers(undefined);

/**
 * `fetch` with retries: {@link createRetryingFetch}'s behaviour for one call. Calls share one circuit breaker per
 * origin (core's defaults) unless `options.breaker` is `false`; give `createRetryingFetch` breaker options of your own.
 *
 * @example
 * ```ts
 * const res = await retryingFetch('https://api.example.com/orders/42', undefined, { policy: { maxAttempts: 5 } });
 * ```
 */
export function retryingFetch(
  input: FetchInput,
  init?: RequestInit,
  options: Omit<RetryingFetchOptions, 'breaker'> & { breaker?: false } = {},
): Promise<Response> {
  return fetchWithRetry(input, init, callPlan(options), options.breaker === false ? undefined : sharedBreakers);
}

/** What the calls of one retrying fetch share, worked out from its options once. */
interface CallPlan {
  policy: Partial<RetryPolicy>;
  statuses: readonly number[];
  keyedMethods: readonly string[];
  send: (url: string, init: RequestInit) => Promise<Response>;
  retryOnError: (error: unknown) => boolean;
  /** Every call's retry options but the signal and the breaker. */
  retryOptions: RetryOptions<Response>;
  /** {@link CallPlan.retryOptions} with an origin's breaker, shared by the calls to it that have no signal. */
  withBreaker: BreakerRetryOptions<Response>;
  /** The policy has a deadline: each attempt needs a signal that it can abort. */
  timed: boolean;
}

/** `globalThis.fetch` as it is at the call (a test or a polyfill may replace it after set-up). */
const globalFetch = (url: string, init: RequestInit): Promise<Response> => globalThis.fetch(url, init);

function callPlan(options: RetryingFetchOptions): CallPlan {
  const policy = withDefaultDeadline(options.policy, IN_REQUEST_DEADLINE_MS);
  const statuses = retryableStatusCodesOf(policy);
  const retryOnError = options.retryOnError ?? defaultRetryOnError;
  const retryOptions = withCallerHooks<Response>({
    retryOnResult: (response) => classifyHttpStatus(response.status, statuses) === HttpOutcome.RETRYABLE,
    retryOnError,
  }, options);
  return {
    policy,
    statuses,
    keyedMethods: options.keyedMethods ?? DEFAULT_KEYED_METHODS,
    send: options.fetch ?? globalFetch,
    retryOnError,
    retryOptions,
    withBreaker: new BreakerRetryOptions(retryOptions),
    timed: policy.totalBudgetMs !== undefined,
  };
}

/**
 * One call. No `async` here: most calls need nothing awaited before the first attempt goes out
 * ({@link plainReplayableRequest}), and each async frame on the way is another turn of the microtask queue.
 */
function fetchWithRetry(input: FetchInput, init: RequestInit | undefined, plan: CallPlan, breakers: OriginBreakers | undefined): Promise<Response> {
  let request: ReplayableRequest | undefined;
  try {
    request = plainReplayableRequest(input, init);
    if (request !== undefined) return sendWithRetry(request, plan, breakers);
  } catch (error) {
    // fetch reports a bad call (a malformed header, say) by rejecting, never by throwing.
    return Promise.reject(error);
  }
  return replayableRequest(input, init).then((buffered) => sendWithRetry(buffered, plan, breakers));
}

function sendWithRetry(request: ReplayableRequest, plan: CallPlan, breakers: OriginBreakers | undefined): Promise<Response> {
  // A stream body is sent once, so it needs no key for retries (and cannot be read to derive one).
  const headers = !request.stream && plan.keyedMethods.includes(request.method) ? withIdempotencyKey(request) : request.headers;
  const base: RequestInit = headers === undefined || headers === request.init.headers ? request.init : copyWith(request.init, { headers });
  const { send, statuses, retryOnError } = plan;
  const url = request.url;
  const breaker = breakers?.forUrl(url);
  let retryOptions = breaker === undefined ? plan.retryOptions : plan.withBreaker.for(breaker);
  // A caller's signal is this call's own: only such a call needs options of its own.
  if (request.signal !== undefined) retryOptions = copyWith(retryOptions, { signal: request.signal });
  // The context's signal is read only when needed: reading it makes an AbortController. Without a deadline or a
  // caller's signal it could never abort. The attempt returns `send`'s own promise: no async frame of its own.
  const needsSignal = plan.timed || request.signal !== undefined;
  const attempt = request.stream
    ? (context: AttemptContext) => sendOnce(send, request, needsSignal ? copyWith(base, { signal: context.signal }) : base, statuses, retryOnError)
    : needsSignal
      ? (context: AttemptContext) => send(url, copyWith(base, { signal: context.signal }))
      : () => send(url, base);
  return retry(attempt, plan.policy, retryOptions).catch(lastResponse);
}

/** fetch answers any status with a Response: retries that ended on one return it, for the caller to read. */
function lastResponse(error: unknown): Response {
  if (error instanceof RetryExhaustedError && error.lastError instanceof RetryableResultError) {
    return error.lastError.result as Response;
  }
  throw error;
}

/** The caller's headers with the request's `Idempotency-Key`: theirs if they sent one, else made once (`requestKey`). */
function withIdempotencyKey(request: ReplayableRequest): NonNullable<RequestInit['headers']> {
  const given = request.headers;
  // A plain object (the usual case) stays one: fetch copies it into its own header list either way, and a
  // `Headers` made here would be one more copy per call.
  if (given === undefined || isPlainRecord(given)) {
    const record = (given ?? {}) as Record<string, string>;
    for (const name in record) if (name.toLowerCase() === KEY_HEADER_LOWER) return record;
    return copyWith(record, { [IDEMPOTENCY_KEY_HEADER]: requestKey({ method: request.method, url: request.url, body: request.keyBody }) });
  }
  const headers = new Headers(given);
  if (!headers.has(IDEMPOTENCY_KEY_HEADER)) {
    headers.set(IDEMPOTENCY_KEY_HEADER, requestKey({ method: request.method, url: request.url, body: request.keyBody }));
  }
  return headers;
}

const KEY_HEADER_LOWER = IDEMPOTENCY_KEY_HEADER.toLowerCase();

/** Headers given as a plain `{ name: value }` object, not a `Headers` or an array of pairs. */
function isPlainRecord(headers: NonNullable<RequestInit['headers']>): boolean {
  if (Array.isArray(headers) || (typeof Headers !== 'undefined' && headers instanceof Headers)) return false;
  const proto = Object.getPrototypeOf(headers) as unknown;
  return proto === Object.prototype || proto === null;
}

/** The one attempt of a request with a stream body: a failure that would be retried becomes the reason it is not. */
async function sendOnce(
  send: (url: string, init: RequestInit) => Promise<Response>,
  request: ReplayableRequest,
  init: RequestInit,
  statuses: readonly number[],
  retryOnError: (error: unknown) => boolean,
): Promise<Response> {
  let response: Response;
  try {
    response = await send(request.url, init);
  } catch (error) {
    if (!retryOnError(error)) throw error;
    throw new BodyNotReplayableError(`the attempt failed (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  if (classifyHttpStatus(response.status, statuses) !== HttpOutcome.RETRYABLE) return response;
  throw new BodyNotReplayableError(`the server answered ${response.status}`, { response });
}
