import { computeDelay, type BackoffSchedule, type Random } from '@retryd/core';
import { problemOf, reasonOf, RetrydApiError, RetrydUnreachableError } from './errors.js';

/** How long one request may take before it is abandoned: 30 s (a page of 1,000 tasks is well under that). */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * How the client retries its own requests when the service is unreachable or answers 429 or 503 (a restart, a store
 * outage): three attempts, waiting up to 200 ms then up to 400 ms (full jitter, drawn by the `computeDelay` the
 * service uses for its tasks). Only requests that are safe to repeat are retried (every one but creating an API key:
 * enqueues always carry an idempotency key); a `Retry-After` longer than the delay wins, up to `maxDelayMs`.
 */
export const CLIENT_RETRY: Readonly<BackoffSchedule & { maxAttempts: number }> = Object.freeze({
  maxAttempts: 3,
  backoffType: 'EXPONENTIAL',
  initialDelayMs: 200,
  multiplier: 2,
  maxDelayMs: 5_000,
  jitterType: 'FULL',
});

/** What the transport needs: where, who, and the injected time, randomness and fetch. */
export interface TransportOptions {
  url: string;
  apiKey: string | undefined;
  timeoutMs: number;
  retry: Readonly<BackoffSchedule & { maxAttempts: number }>;
  random: Random;
  sleep: (ms: number) => Promise<void>;
  fetch: typeof fetch;
}

/** One request's own time limit and abort, where they differ from the client's (a long poll waits longer). */
export interface RequestControl {
  /** Most time this request may take, in ms. Default the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Ends the request (and its retries) when aborted, with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** The request's signal: its time limit, and the caller's abort when given. */
function signalOf(timeoutMs: number, signal: AbortSignal | undefined): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return signal === undefined ? timeout : AbortSignal.any([timeout, signal]);
}

/** A successful answer: its status, headers and parsed JSON body. */
export interface Answer<T> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * Sends one API request, retried as {@link CLIENT_RETRY} says when `repeatable`. Answers a 2xx; throws
 * {@link RetrydApiError} for an error answer and {@link RetrydUnreachableError} when there is none. The API key goes
 * only into the `Authorization` header, never into an error.
 */
export async function send<T>(
  options: TransportOptions,
  method: string,
  path: string,
  body: unknown,
  repeatable: boolean,
  headers: Readonly<Record<string, string>> = {},
  request: RequestControl = {},
): Promise<Answer<T>> {
  const { retry } = options;
  let previousDelayMs = 0;
  for (let attempt = 1; ; attempt += 1) {
    const last = !repeatable || attempt >= retry.maxAttempts;
    let response: Response;
    try {
      response = await options.fetch(`${options.url}${path}`, {
        method,
        headers: {
          accept: 'application/json, application/problem+json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: signalOf(request.timeoutMs ?? options.timeoutMs, request.signal),
      });
    } catch (error) {
      // The caller's own abort is not the service being unreachable: it ends the call, unretried.
      if (request.signal?.aborted === true) throw request.signal.reason;
      if (last) throw new RetrydUnreachableError(`cannot reach ${options.url}: ${reasonOf(error)}`);
      previousDelayMs = await pause(options, attempt, previousDelayMs, null);
      continue;
    }
    const text = await response.text();
    if (response.ok) return { status: response.status, headers: response.headers, body: (text === '' ? undefined : JSON.parse(text)) as T };
    if (!last && (response.status === 503 || response.status === 429)) {
      previousDelayMs = await pause(options, attempt, previousDelayMs, response.headers.get('retry-after'));
      continue;
    }
    throw new RetrydApiError(response.status, problemOf(response.status, text));
  }
}

/** Waits before retry `n`; a `Retry-After` in seconds that asks for longer wins, up to `maxDelayMs`. Answers the computed delay. */
async function pause(options: TransportOptions, n: number, previousDelayMs: number, retryAfter: string | null): Promise<number> {
  const computed = computeDelay(options.retry, n, previousDelayMs, options.random);
  const asked = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) * 1000 : 0;
  await options.sleep(Math.min(options.retry.maxDelayMs, Math.max(computed, asked)));
  return computed;
}
