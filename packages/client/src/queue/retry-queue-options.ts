import type { Clock, Random, RetryPolicy } from '@retryd/core';
import type { CredentialRules } from '../credentials/strip-credentials.js';
import type { DeadLetter } from './dead-letter.js';
import type { QueuedCall, QueuedRequest, QueuePersistence } from './queued-call.js';

/** The time a queue runs on: epoch milliseconds and one-shot timers (core's `systemClock`, or `ManualClock`). */
export type QueueClock = Pick<Clock, 'now'> & Required<Pick<Clock, 'setTimer' | 'clearTimer'>>;

/**
 * Gives an attempt its credential headers at send time: `Authorization`, `Cookie`, an API key. Called before every
 * attempt with the request as the queue keeps it (without them); what it returns is added to that attempt's headers
 * only, and never stored.
 */
export type CredentialResolver = (request: QueuedRequest) => Record<string, string> | Promise<Record<string, string>>;

/**
 * Options of {@link RetryQueue.open}. All optional.
 *
 * Credentials are not kept with a queued call (nor in its `persistence`): `enqueue` refuses a request with a header
 * that carries one (a name holding auth, token, key, secret, password, session, cookie, signature or credential, as
 * `isCredentialHeader` tells: `Authorization`, `Cookie`, `X-Api-Key`, `X-Password`), unless `credentials` gives them
 * at send time, in which case they are dropped, or `storeCredentials` is on.
 */
export interface RetryQueueOptions extends Pick<CredentialRules, 'alsoStrip' | 'notCredentials'> {
  /**
   * The retry policy, as some of its fields over core's `DEFAULT_POLICY` and a deadline (`totalBudgetMs`, counted from
   * the enqueue) of 24 hours (`QUEUE_DEADLINE_MS`). A `Retry-After` is honoured up to the deadline, whatever
   * `maxDelayMs` says: no one waits on a queued call.
   */
  policy?: Partial<RetryPolicy>;
  /**
   * The credential headers of each attempt, asked for at send time (as the retryd service resolves `{{secret:NAME}}`
   * at dispatch), so that they are never stored: a current token for every attempt, none left in IndexedDB. With it,
   * credential headers given to `enqueue` are dropped. What it throws fails the attempt as a failed send would
   * (retried, unless the error says `retryable: false`). Default: none.
   * @example
   * ```ts
   * credentials: async () => ({ authorization: `Bearer ${await session.accessToken()}` })
   * ```
   */
  credentials?: CredentialResolver;
  /**
   * Keep credential headers given to `enqueue` as they are, in the queued call and its persistence. Default false.
   * The risk: IndexedDB is readable by every script of the origin (an XSS, a compromised dependency), outlives a
   * logout and stays on a shared computer, and a stored token goes on being sent once revoked or the user changed.
   * Only for a credential worth no more than the call itself (a write-only ingest key); prefer `credentials`.
   */
  storeCredentials?: boolean;
  /** Calls the queue holds at most (waiting and in flight); `enqueue` refuses more. Default 1,000. */
  maxSize?: number;
  /** Attempts in flight at once. Default 4. */
  concurrency?: number;
  /** Sends one attempt. Default `fetch(request.url, { method, headers, body, signal })`. */
  send?: (request: QueuedRequest, signal: AbortSignal) => Promise<Response>;
  /** Keeps the calls across reloads (e.g. `indexedDbPersistence()`); default: memory only. */
  persistence?: QueuePersistence;
  /** A call that succeeded (its response's body is the callee's to read). */
  onSuccess?: (call: QueuedCall, response: Response) => void;
  /** A call that left the queue without success. */
  onDeadLetter?: (letter: DeadLetter) => void;
  /** A failure of the persistence in the background (a save after an attempt); the queue goes on in memory. */
  onError?: (error: unknown) => void;
  /** Time (default core's `systemClock`, whose `now` is epoch ms). */
  clock?: QueueClock;
  /** Randomness for jitter (default `Math.random`). */
  random?: Random;
  /** A fresh id for an enqueued call (default `crypto.randomUUID()`, or 128 random bits in hex where it is missing). */
  newId?: () => string;
}
