import type { Clock, Random, RetryPolicy } from '@retryd/core';
import type { DeadLetter } from './dead-letter.js';
import type { QueuedCall, QueuedRequest, QueuePersistence } from './queued-call.js';

/** The time a queue runs on: epoch milliseconds and one-shot timers (core's `systemClock`, or `ManualClock`). */
export type QueueClock = Pick<Clock, 'now'> & Required<Pick<Clock, 'setTimer' | 'clearTimer'>>;

/** Options of {@link RetryQueue.open}. All optional. */
export interface RetryQueueOptions {
  /** The retry policy, as some of its fields over core's `DEFAULT_POLICY`; `totalBudgetMs` counts from the enqueue. */
  policy?: Partial<RetryPolicy>;
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
