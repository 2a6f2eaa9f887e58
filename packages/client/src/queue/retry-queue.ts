import {
  DEFAULT_POLICY,
  GiveUpReason,
  HttpOutcome,
  assertValidPolicy,
  budgetAllowsAttempt,
  classifyHttpResponse,
  failureClassOf,
  headerValue,
  isRetryableError,
  planRetry,
  retryableStatusCodesOf,
  successStatusCodesOf,
  systemClock,
  type RetryPolicy,
} from '@retryd/core';
import { CredentialRuleError, stripCredentials } from '../credentials/strip-credentials.js';
import { isBrowserNetworkError } from '../shared/browser-network-error.js';
import { QUEUE_DEADLINE_MS, withDefaultDeadline } from '../shared/default-deadline.js';
import { DEFAULT_KEYED_METHODS, IDEMPOTENCY_KEY_HEADER } from '../shared/keyed-methods.js';
import { positiveInteger } from '../shared/positive-integer.js';
import { randomId } from '../shared/random-id.js';
import { CallSchedule } from './call-schedule.js';
import { DeadLetterReason, type DeadLetter } from './dead-letter.js';
import { QueueFullError } from './queue-full-error.js';
import type { QueuedCall, QueuedRequest } from './queued-call.js';
import type { QueueClock, RetryQueueOptions } from './retry-queue-options.js';

/** What {@link RetryQueue.enqueue} takes: a request as data; `method` defaults to GET, `headers` to none. */
export interface RetryQueueRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * The former name of {@link RetryQueueRequest}, kept so that code written against it still compiles.
 * @deprecated Use {@link RetryQueueRequest}; the service's `POST /retry-tasks` body is `EnqueueTaskRequest`.
 */
export type EnqueueRequest = RetryQueueRequest;

const defaultSend = (request: QueuedRequest, signal: AbortSignal): Promise<Response> =>
  fetch(request.url, { method: request.method, headers: request.headers, signal, ...(request.body === undefined ? {} : { body: request.body }) });

/**
 * A queue of HTTP calls that retries each until it succeeds or the policy gives up, for browsers and edge runtimes
 * where nothing else will retry a call once the code that made it has moved on.
 *
 * - In memory, bounded: at most `maxSize` calls (`enqueue` throws {@link QueueFullError} beyond) and `concurrency`
 *   attempts in flight.
 * - Scheduled by due time: calls wait in due order and one timer is set, for the first due; no polling.
 * - Each call's delays follow the policy through core's `planRetry` (Retry-After honoured up to the deadline:
 *   `totalBudgetMs`, counted from the enqueue, 24 hours by default); a call that succeeds goes to `onSuccess`, one
 *   that fails for good to `onDeadLetter`, and so does one taken up after a reload past its deadline, unsent.
 * - Credential headers are not stored with a call: `credentials` gives them to each attempt at send time (see
 *   {@link RetryQueueOptions}).
 * - POST and PATCH carry an `Idempotency-Key` (the caller's, else the call's id) on every attempt, reloads included.
 * - With a `persistence` (IndexedDB: `indexedDbPersistence()` from `@retryd/client/indexeddb`), calls are stored
 *   before `enqueue` resolves and after each attempt, and {@link RetryQueue.open} takes them up again after a reload.
 *   One queue per store: two tabs opening the same store would both send its calls.
 *
 * @example
 * ```ts
 * const queue = await RetryQueue.open({ persistence: indexedDbPersistence(), onDeadLetter: (l) => report(l) });
 * await queue.enqueue({ url: '/api/events', method: 'POST', headers: { 'content-type': 'application/json' }, body });
 * ```
 */
export class RetryQueue {
  readonly #policy: RetryPolicy;
  readonly #statuses: readonly number[];
  readonly #maxSize: number;
  readonly #concurrency: number;
  readonly #clock: QueueClock;
  readonly #send: (request: QueuedRequest, signal: AbortSignal) => Promise<Response>;
  readonly #schedule = new CallSchedule();
  readonly #inFlight = new Set<AbortController>();
  readonly #idle: (() => void)[] = [];
  #reserved = 0;
  #timer: unknown;
  #timerAt: number | undefined;
  #closed = false;

  private constructor(private readonly options: RetryQueueOptions) {
    this.#policy = assertValidPolicy({ ...DEFAULT_POLICY, ...withDefaultDeadline(options.policy, QUEUE_DEADLINE_MS) });
    this.#statuses = retryableStatusCodesOf(this.#policy);
    this.#maxSize = positiveInteger(options.maxSize ?? 1_000, 'maxSize');
    this.#concurrency = positiveInteger(options.concurrency ?? 4, 'concurrency');
    this.#clock = options.clock ?? (systemClock as QueueClock);
    this.#send = options.send ?? defaultSend;
  }

  /**
   * A queue with these options, holding the calls its persistence kept (due ones start at once).
   * @throws InvalidPolicyError, or RangeError naming `maxSize` or `concurrency`, when an option breaks its rule
   */
  static async open(options: RetryQueueOptions = {}): Promise<RetryQueue> {
    const queue = new RetryQueue(options);
    for (const call of (await options.persistence?.load()) ?? []) queue.#schedule.insert(call);
    queue.#pump();
    return queue;
  }

  /** Calls held: waiting, in flight, or being stored. */
  get size(): number {
    return this.#schedule.size + this.#inFlight.size + this.#reserved;
  }

  /**
   * Adds a call, due now; resolves once it is stored (with a persistence), with the call as queued: its credential
   * headers dropped when the queue has a `credentials` resolver.
   * @throws QueueFullError when the queue holds `maxSize` calls; TypeError naming `url` or `method`;
   *   CredentialRuleError naming a credential header given without `credentials` or `storeCredentials`
   */
  async enqueue(request: RetryQueueRequest): Promise<QueuedCall> {
    if (this.#closed) throw new Error('the queue is closed: open a new one');
    if (this.size >= this.#maxSize) throw new QueueFullError(this.#maxSize);
    const method = (request.method ?? 'GET').toUpperCase();
    if (!/^[A-Z]+$/.test(method)) throw new TypeError(`method must be an HTTP method, got ${JSON.stringify(request.method)}`);
    const headers = this.#storableHeaders(request.headers ?? {});
    const id = this.options.newId?.() ?? randomId();
    if (DEFAULT_KEYED_METHODS.includes(method) && headerValue(headers, IDEMPOTENCY_KEY_HEADER) === undefined) headers[IDEMPOTENCY_KEY_HEADER] = id;
    const now = this.#clock.now();
    const call: QueuedCall = {
      id,
      request: { url: absolute(request.url), method, headers, ...(request.body === undefined ? {} : { body: request.body }) },
      attempts: 0,
      dueAt: now,
      enqueuedAt: now,
      previousDelayMs: 0,
    };
    // Counted while it is stored, so that enqueues racing one another cannot overfill the queue.
    this.#reserved++;
    try {
      await this.options.persistence?.save(call);
    } catch (error) {
      this.#reserved--;
      this.#pump(); // the queue may be empty now: wake drained()
      throw error;
    }
    this.#reserved--;
    this.#schedule.insert(call);
    this.#pump();
    return call;
  }

  /** The headers to keep with a call: without its credentials, unless the queue may store them. */
  #storableHeaders(given: Record<string, string>): Record<string, string> {
    if (this.options.storeCredentials === true) return { ...given };
    const { headers, removed } = stripCredentials(given, this.options);
    const [first] = removed;
    // Dropping them without a resolver would send every replay without its credentials, to be refused with a 401:
    // better to say so now, at the enqueue the developer is writing.
    if (first !== undefined && this.options.credentials === undefined) {
      throw new CredentialRuleError(
        `headers.${first} carries a credential, which a RetryQueue does not store: give the queue a \`credentials\` resolver ` +
          `that returns it at send time (or name the header in \`notCredentials\` if it carries none, or accept the risk ` +
          `with \`storeCredentials: true\`)`,
      );
    }
    return headers;
  }

  /** Resolves when the queue holds no call (at once if it is empty). */
  drained(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Stops: no new attempt starts and those in flight are aborted; stored calls stay stored for the next `open`. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    for (const controller of this.#inFlight) controller.abort(new Error('the queue was closed'));
  }

  #pump(): void {
    if (this.#closed) return;
    const now = this.#clock.now();
    for (let head = this.#schedule.peek(); head !== undefined && head.dueAt <= now && this.#inFlight.size < this.#concurrency; head = this.#schedule.peek()) {
      this.#schedule.shift();
      void this.#attempt(head);
    }
    this.#arm();
    if (this.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** One timer, for the call due first, and none while every slot is busy (a finishing attempt pumps). */
  #arm(): void {
    const head = this.#schedule.peek();
    const at = head !== undefined && this.#inFlight.size < this.#concurrency ? head.dueAt : undefined;
    if (at === this.#timerAt) return;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#timerAt = at;
    if (at === undefined) return;
    this.#timer = this.#clock.setTimer(Math.max(0, at - this.#clock.now()), () => {
      this.#timer = undefined;
      this.#timerAt = undefined;
      this.#pump();
    });
  }

  async #attempt(call: QueuedCall): Promise<void> {
    const controller = new AbortController();
    this.#inFlight.add(controller);
    try {
      if (budgetAllowsAttempt(this.#policy, this.#clock.now() - call.enqueuedAt)) await this.#try(call, controller.signal);
      // Taken up from storage past its deadline (the page was closed meanwhile): too late to send.
      else await this.#deadLetter({ call, reason: GiveUpReason.BUDGET });
    } catch (failure) {
      this.#report(this.options.onError, failure);
    } finally {
      this.#inFlight.delete(controller);
      this.#pump();
    }
  }

  async #try(call: QueuedCall, signal: AbortSignal): Promise<void> {
    let response: Response | undefined;
    let error: unknown;
    try {
      response = await this.#send(await this.#withCredentials(call.request), signal);
    } catch (thrown) {
      error = thrown;
    }
    // Closed meanwhile: leave the stored call as it was, for the next open.
    if (!this.#closed) await this.#settle({ ...call, attempts: call.attempts + 1 }, response, error);
  }

  /** The request with the credentials the resolver gives now, for this attempt only. */
  async #withCredentials(request: QueuedRequest): Promise<QueuedRequest> {
    const resolve = this.options.credentials;
    if (resolve === undefined) return request;
    return { ...request, headers: { ...request.headers, ...(await resolve(request)) } };
  }

  async #settle(call: QueuedCall, response: Response | undefined, error: unknown): Promise<void> {
    const now = this.#clock.now();
    let retryAfterMs: number | undefined;
    if (response !== undefined) {
      const { outcome, retryAfterMs: hint } = classifyHttpResponse(response, {
        retryableStatusCodes: this.#statuses,
        successStatusCodes: successStatusCodesOf(this.#policy),
        nowMs: now,
      });
      if (outcome === HttpOutcome.SUCCESS) {
        await this.options.persistence?.remove(call.id);
        this.#report(this.options.onSuccess, call, response);
        return;
      }
      if (outcome === HttpOutcome.PERMANENT) return this.#deadLetter({ call, reason: DeadLetterReason.PERMANENT_STATUS, response });
      retryAfterMs = hint;
    } else if (!isRetryableError(error) && !isBrowserNetworkError(error)) {
      return this.#deadLetter({ call, reason: DeadLetterReason.NON_RETRYABLE_ERROR, error });
    }
    const elapsedMs = now - call.enqueuedAt;
    const plan = planRetry({
      policy: this.#policy,
      attemptsMade: call.attempts,
      elapsedMs,
      previousDelayMs: call.previousDelayMs,
      retryAfterMs,
      random: this.options.random ?? Math.random,
      failureClass: failureClassOf(response ?? error),
    });
    const last = response === undefined ? { error } : { response };
    if (!plan.retry) return this.#deadLetter({ call, reason: plan.reason, ...last });
    const budget = this.#policy.totalBudgetMs;
    // As core's retry(): an attempt that would start with no budget left is not made.
    if (budget !== undefined && elapsedMs + plan.delayMs >= budget) return this.#deadLetter({ call, reason: GiveUpReason.BUDGET, ...last });
    void response?.body?.cancel().catch(() => undefined);
    const next: QueuedCall = { ...call, dueAt: now + plan.delayMs, previousDelayMs: plan.previousDelayMs };
    try {
      await this.options.persistence?.save(next);
    } catch (error) {
      // The stored call keeps its previous state (an attempt fewer): it is retried in memory all the same.
      this.#report(this.options.onError, error);
    }
    // Scheduled after the save, so that the call is counted once (in flight) meanwhile.
    this.#schedule.insert(next);
  }

  async #deadLetter(letter: DeadLetter): Promise<void> {
    await this.options.persistence?.remove(letter.call.id);
    this.#report(this.options.onDeadLetter, letter);
  }

  /** Calls a caller's callback; what it throws must not stop the queue. */
  #report<A extends unknown[]>(callback: ((...args: A) => void) | undefined, ...args: A): void {
    try {
      callback?.(...args);
    } catch {
      // A callback's failure is the caller's; the queue goes on.
    }
  }
}

/** The URL made absolute (a page's relative URL against its location), so that it means the same after a reload. */
function absolute(url: string): string {
  try {
    return new URL(url, (globalThis as { location?: { href: string } }).location?.href).href;
  } catch {
    throw new TypeError(`url must be an absolute URL, or relative in a page, got ${JSON.stringify(url)}`);
  }
}
