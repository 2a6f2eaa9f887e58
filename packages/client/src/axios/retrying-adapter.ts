import {
  HttpOutcome,
  RetryExhaustedError,
  classifyHttpStatus,
  isNetworkError,
  isRetryableError,
  retry,
  retryableStatusCodesOf,
  type AttemptContext,
  type IdempotencyKeyInput,
  type RetryOptions,
  type RetryPolicy,
} from '@retryd/core';
import axios, { AxiosHeaders, type AxiosAdapter, type AxiosResponse, type InternalAxiosRequestConfig } from 'axios';
import { BodyNotReplayableError } from '../shared/body-not-replayable-error.js';
import { BreakerRetryOptions } from '../shared/breaker-retry-options.js';
import { withCallerHooks } from '../shared/caller-hooks.js';
import { copyWith } from '../shared/copy-with.js';
import { IN_REQUEST_DEADLINE_MS, withDefaultDeadline } from '../shared/default-deadline.js';
import type { ConcurrencyLimit } from '../shared/concurrency-limit.js';
import { DEFAULT_KEYED_METHODS, IDEMPOTENCY_KEY_HEADER } from '../shared/keyed-methods.js';
import type { OriginBreakers } from '../shared/origin-breakers.js';
import { requestKey } from '../shared/request-key.js';
import { memoByString } from '../shared/string-memo.js';
import type { AxiosRetryOptions } from './axios-retry-options.js';

/** What one instance's retrying adapters share, worked out from the options once (not per request). */
export interface RetryingAdapterContext {
  breakers: OriginBreakers | undefined;
  retries: ConcurrencyLimit;
  policy: Partial<RetryPolicy>;
  keyedMethods: readonly string[];
  retryOnError: (error: unknown) => boolean;
  /** Every request's retry options but the signal and the breaker. */
  retryOptions: RetryOptions<AxiosResponse>;
  /** {@link RetryingAdapterContext.retryOptions} with an origin's breaker, shared by the requests to it that have no signal. */
  withBreaker: BreakerRetryOptions<AxiosResponse>;
  /** The policy has a deadline: each attempt needs a signal that it can abort. */
  timed: boolean;
}

/**
 * The context of {@link retryingAdapter} for one axios instance.
 *
 * @param retries - the instance's bound on retries in flight (`maxConcurrentRetries`)
 * @param breakers - the instance's breakers, or undefined for none
 */
export function retryingAdapterContext(options: AxiosRetryOptions, retries: ConcurrencyLimit, breakers: OriginBreakers | undefined): RetryingAdapterContext {
  const policy = withDefaultDeadline(options.policy, IN_REQUEST_DEADLINE_MS);
  const statuses = retryableStatusCodesOf(policy);
  const retryOnError = options.retryOnError ?? ((error: unknown) => isRetryableAxiosError(error, statuses));
  const retryOptions = withCallerHooks<AxiosResponse>({ retryOnError }, options);
  return {
    breakers,
    retries,
    policy,
    keyedMethods: options.keyedMethods ?? DEFAULT_KEYED_METHODS,
    retryOnError,
    retryOptions,
    withBreaker: new BreakerRetryOptions(retryOptions),
    timed: policy.totalBudgetMs !== undefined,
  };
}

/** axios's codes for a request that got no answer and may get one later; any other code without a response is a misuse. */
const NO_ANSWER_CODES: ReadonlySet<string> = new Set(['ERR_NETWORK', 'ECONNABORTED', 'ETIMEDOUT']);

/**
 * Wraps an axios adapter (the function that sends a request) in core's `retry`: each attempt sends a fresh copy of
 * the config, since adapters write to the config and its headers, and second and later attempts wait for a turn of
 * the instance's retry limit.
 */
export function retryingAdapter(base: AxiosAdapter, shared: RetryingAdapterContext): AxiosAdapter {
  return (config) => {
    try {
      return sendWithRetry(config, base, shared);
    } catch (error) {
      // An adapter reports by rejecting.
      return Promise.reject(error);
    }
  };
}

/** One request. No `async` here: each async frame on the way is another turn of the microtask queue. */
function sendWithRetry(config: InternalAxiosRequestConfig, base: AxiosAdapter, shared: RetryingAdapterContext): Promise<AxiosResponse> {
  const { breakers, retries, policy, retryOnError } = shared;
  const url = absoluteUrl(config);
  const method = (config.method ?? 'get').toUpperCase();
  const data: unknown = config.data;
  const stream = isStream(data);
  // axios made these headers for this request (dispatchRequest copies the caller's): the key may go on them, and then
  // `error.config` sent again carries the same key. Each attempt still sends a copy, which the adapter may write to.
  const headers = config.headers instanceof AxiosHeaders ? config.headers : AxiosHeaders.from(config.headers);
  if (!stream && shared.keyedMethods.includes(method) && !headers.has(IDEMPOTENCY_KEY_HEADER)) {
    headers.set(IDEMPOTENCY_KEY_HEADER, requestKey(keyInput(method, url, data)));
  }
  const cancel = cancellationOf(config);
  const needsSignal = shared.timed || cancel !== undefined;
  const breaker = breakers !== undefined && url !== undefined ? breakers.forUrl(url) : undefined;
  let retryOptions = breaker === undefined ? shared.retryOptions : shared.withBreaker.for(breaker);
  // A cancellation is this request's own: only such a request needs options of its own.
  if (cancel !== undefined) retryOptions = copyWith(retryOptions, { signal: cancel.signal });

  // axios's own adapters write to neither the config nor its headers: every attempt can send this request's config
  // (axios's merged copy, not the caller's object). Copying it would cost more than the rest of the attempt: it is a
  // null-prototype object in dictionary mode. Any other adapter gets a copy per attempt, in case it writes to it, and
  // so does an attempt with a signal of its own: axios reads `config.signal` again once the adapter has answered.
  const ownAdapter = !needsSignal && AXIOS_ADAPTERS.has(base);
  if (ownAdapter) {
    // With the plain adapter: a caller who sends `error.config` again must not get retries inside retries.
    config.adapter = base;
    config.headers = headers;
  }
  // The context's signal is read only when needed: reading it makes an AbortController.
  const attempt = (context: AttemptContext): Promise<AxiosResponse> => {
    const copy: InternalAxiosRequestConfig = ownAdapter ? config : { ...config, adapter: base, headers: AxiosHeaders.from(headers) };
    if (needsSignal) copy.signal = context.signal;
    if (stream) return sendOnce(base, copy, retryOnError);
    return context.attempt === 1 ? base(copy) : retries.run(() => base(copy), needsSignal ? context.signal : undefined);
  };
  // Without a cancellation to unlink at the end (the usual request), no async frame of its own.
  if (cancel === undefined) return retry(attempt, policy, retryOptions).catch(lastAxiosError);
  return cancellable(retry(attempt, policy, retryOptions), cancel);
}

/** The request's outcome, or axios's `CanceledError` when the caller cancelled it; the caller's signal unlinked after. */
async function cancellable(pending: Promise<AxiosResponse>, cancel: Cancellation): Promise<AxiosResponse> {
  try {
    return await pending;
  } catch (error) {
    if (cancel.signal.aborted) throw cancel.signal.reason;
    return lastAxiosError(error);
  } finally {
    cancel.unlink();
  }
}

/** axios callers read `error.response`: retries that ended on an axios error end with that error. */
function lastAxiosError(error: unknown): never {
  if (error instanceof RetryExhaustedError && axios.isAxiosError(error.lastError)) throw error.lastError;
  throw error;
}

/** Whether an axios error is worth another attempt: the policy's statuses, or no answer at all (not a misuse). */
export function isRetryableAxiosError(error: unknown, statuses: readonly number[]): boolean {
  if (axios.isCancel(error)) return false;
  if (!axios.isAxiosError(error)) return isRetryableError(error);
  if (error.response !== undefined) return classifyHttpStatus(error.response.status, statuses) === HttpOutcome.RETRYABLE;
  return isNetworkError(error) || (error.code !== undefined && NO_ANSWER_CODES.has(error.code));
}

/**
 * axios's own adapters. They read the config and write to copies of it (`AxiosHeaders.from(config.headers)` in the
 * http adapter, `resolveConfig` in xhr and fetch), never to the config or the headers they are given.
 */
const AXIOS_ADAPTERS: ReadonlySet<unknown> = new Set(
  ['http', 'xhr', 'fetch'].map((name) => {
    try {
      return axios.getAdapter(name);
    } catch {
      return undefined; // not available where this runs (xhr in Node, http in a browser)
    }
  }),
);

const ABSOLUTE_URL = /^([a-z][a-z\d+\-.]*:)?\/\//i;

/** The request's absolute URL (a browser's relative one against the page), or undefined when it has none. */
function absoluteUrl(config: InternalAxiosRequestConfig): string | undefined {
  let path: string;
  try {
    path = fullPath(config);
  } catch {
    return undefined;
  }
  return resolveUrl(`${(globalThis as { location?: { href: string } }).location?.href ?? ''}\n${path}`);
}

/** `page\npath` to the absolute URL, remembered for the URLs called most: parsing one is a good part of a call's cost. */
const resolveUrl = memoByString((key: string): string | undefined => {
  const cut = key.indexOf('\n');
  const page = key.slice(0, cut);
  try {
    return new URL(key.slice(cut + 1), page === '' ? undefined : page).href;
  } catch {
    return undefined;
  }
});

/**
 * `baseURL` joined to `url` as axios joins them. `axios.getUri` does this too, but first merges the config with the
 * defaults again, which measured at a third of what this adapter costs a request; it stays for `params`, whose
 * serialisation is axios's own.
 */
function fullPath(config: InternalAxiosRequestConfig): string {
  const url = config.url ?? '';
  if (config.params !== undefined && config.params !== null) return axios.getUri(config);
  if (config.baseURL === undefined || (ABSOLUTE_URL.test(url) && config.allowAbsoluteUrls !== false)) return url;
  return url === '' ? config.baseURL : `${config.baseURL.replace(/\/+$/, '')}/${url.replace(/^\/+/, '')}`;
}

/** What identifies the request for a derived key, when its body has stable bytes (axios has serialised JSON already). */
function keyInput(method: string, url: string | undefined, data: unknown): IdempotencyKeyInput | undefined {
  if (url === undefined) return undefined;
  const bytes = data === undefined || data === null || typeof data === 'string' || ArrayBuffer.isView(data) || data instanceof ArrayBuffer || data instanceof URLSearchParams;
  // FormData and other objects have no stable bytes here: such a request gets a random key, the same on each attempt.
  return bytes ? { method, url, body: data } : undefined;
}

const isStream = (data: unknown): boolean =>
  typeof data === 'object' &&
  data !== null &&
  (typeof (data as { pipe?: unknown }).pipe === 'function' || typeof (data as ReadableStream).getReader === 'function');

/** The one attempt of a request with a stream body: a failure that would be retried becomes the reason it is not. */
async function sendOnce(base: AxiosAdapter, config: InternalAxiosRequestConfig, retryOnError: (error: unknown) => boolean): Promise<AxiosResponse> {
  try {
    return await base(config);
  } catch (error) {
    if (!retryOnError(error)) throw error;
    const what = axios.isAxiosError(error) && error.response ? `the server answered ${error.response.status}` : `the attempt failed (${String((error as Error).message)})`;
    throw new BodyNotReplayableError(what, { cause: error, response: axios.isAxiosError(error) ? error.response : undefined });
  }
}

interface Cancellation {
  signal: AbortSignal;
  unlink(): void;
}

/**
 * One signal for the caller's two ways of cancelling (`signal` and the older `cancelToken`), so that cancelling stops
 * the sleeps between attempts too. It aborts with axios's `CanceledError`, which `axios.isCancel` recognises.
 */
function cancellationOf(config: InternalAxiosRequestConfig): Cancellation | undefined {
  const { signal, cancelToken } = config;
  if (signal === undefined && cancelToken === undefined) return undefined;
  const controller = new AbortController();
  const abort = (reason?: unknown) => {
    if (!controller.signal.aborted) controller.abort(axios.isCancel(reason) ? reason : new axios.CanceledError(undefined, config));
  };
  const onSignal = () => abort();
  const onToken = (reason: unknown) => abort(reason);
  if (signal?.aborted) abort();
  signal?.addEventListener?.('abort', onSignal);
  cancelToken?.subscribe(onToken);
  if (cancelToken?.reason !== undefined) abort(cancelToken.reason);
  return {
    signal: controller.signal,
    unlink: () => {
      signal?.removeEventListener?.('abort', onSignal);
      cancelToken?.unsubscribe(onToken);
    },
  };
}
