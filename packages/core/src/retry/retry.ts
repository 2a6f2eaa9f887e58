import type { CircuitBreaker } from '../breaker/circuit-breaker.js';
import type { RetryBudget } from '../budget/retry-budget.js';
import { failureClassOf, type FailureClass } from '../http/failure-class.js';
import { DEFAULT_POLICY, type RetryPolicy } from '../policy/retry-policy.js';
import { assertValidPolicy } from '../policy/validate-policy.js';
import { systemClock, type Clock, type Random } from '../time/clock.js';
import { isRetryableError } from './default-retryable.js';
import { GiveUpReason, planRetry } from './plan-retry.js';
import { retryAfterHint } from './retry-after-hint.js';
import { RetryableResultError, RetryExhaustedError } from './retry-errors.js';

/** What each attempt of `fn` is told. */
export interface AttemptContext {
  /** 1 for the first attempt. */
  attempt: number;
  /**
   * Aborts when the caller's signal does, or when the policy's `totalBudgetMs` runs out during the attempt (its reason
   * is then a `TimeoutError`): pass it to `fetch` and friends.
   */
  signal: AbortSignal;
  /** Time since the first attempt started, in ms. */
  elapsedMs: number;
}

/** How an attempt ended, as reported to `onAttempt`. */
export const AttemptOutcome = {
  SUCCESS_FIRST_TRY: 'success_first_try',
  SUCCESS_AFTER_RETRY: 'success_after_retry',
  RETRY_SCHEDULED: 'retry_scheduled',
  NON_RETRYABLE: 'non_retryable',
  EXHAUSTED: 'exhausted',
} as const;
export type AttemptOutcome = (typeof AttemptOutcome)[keyof typeof AttemptOutcome];

/** One report of `onAttempt`: enough to build metrics and logs on. */
export interface AttemptEvent {
  attempt: number;
  outcome: AttemptOutcome;
  /** The wait chosen before the next attempt (`retry_scheduled` only). */
  delayMs?: number;
  /** Whether that wait came from a Retry-After hint. */
  hinted?: boolean;
  /** Why retrying stopped (`exhausted` only). */
  reason?: GiveUpReason;
  /** Time from the start of the first attempt to the end of this one. */
  elapsedMs: number;
  /** The attempt's duration. */
  durationMs: number;
  /** The failure, if any (a `RetryableResultError` for a retryable result). */
  error?: unknown;
}

/** Options of {@link retry}. All optional. */
export interface RetryOptions<T> {
  /** Cancels the whole operation, sleeps included; `retry` rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Whether an error is worth another attempt. Default {@link isRetryableError}. */
  retryOnError?: (error: unknown, context: AttemptContext) => boolean;
  /** Whether a returned value is a failure worth retrying (e.g. `(r) => r.status === 503`). Default: never. */
  retryOnResult?: (result: T, context: AttemptContext) => boolean;
  /** Finds a Retry-After hint (ms) on an error or a retryable result. Default {@link retryAfterHint}. */
  retryAfter?: (failure: unknown, nowMs: number) => number | undefined;
  /**
   * Tells the class of a failure (an error, or a retryable result), which picks its schedule from the policy's
   * `backoffByClass`. Default {@link failureClassOf}: 429 → `rateLimited`, 5xx → `serverError`, timeouts, refused
   * connections. Called only when the policy has `backoffByClass`.
   */
  failureClass?: (failure: unknown) => FailureClass | undefined;
  /** While it is open, `retry` fails fast with the breaker's error and burns no attempts. */
  breaker?: CircuitBreaker;
  /** A shared retry budget: first attempts deposit, retries withdraw; a refusal ends the retries. */
  retryBudget?: RetryBudget;
  /** Reports every attempt with its outcome and the delay chosen. Exceptions it throws are ignored. */
  onAttempt?: (event: AttemptEvent) => void;
  /** Time source and sleep (default the system clock). Use `ManualClock` from `@retryd/core/testing` in tests. */
  clock?: Clock;
  /** Randomness for jitter (default `Math.random`). Use `seededRandom` in tests. */
  random?: Random;
  /** Wall-clock time for HTTP-date Retry-After values (default `Date.now`). */
  wallClock?: () => number;
}

/**
 * Calls `fn` until it succeeds, a failure is not retryable, or the policy gives up.
 *
 * - Always makes at least one attempt and never sleeps after the final one.
 * - Non-retryable errors are rethrown at once, unchanged; giving up throws {@link RetryExhaustedError}.
 * - `totalBudgetMs` counts from the call of `retry()`. Each sleep is clipped so the next attempt starts no later than
 *   `totalBudgetMs − estimatedCallMs`; with less than `estimatedCallMs` left (or no time at all) it gives up at once.
 *   An attempt still running when the budget runs out has its `signal` aborted (with a `TimeoutError`) and `retry`
 *   rejects at that moment with {@link RetryExhaustedError} reason `budget`, whether or not `fn` heeds the signal.
 * - A Retry-After hint replaces the computed delay (no jitter added), up to the `maxDelayMs` of the failure's schedule
 *   and the budget: one longer than `maxDelayMs`, or landing past the budget, ends the retries now with
 *   {@link RetryExhaustedError} reason `retry_after_beyond_budget` rather than hold the caller that long. To honour
 *   longer hints for 429s, give `backoffByClass.rateLimited` a larger `maxDelayMs`.
 * - With `backoffByClass`, each delay follows the schedule of the failure's class (`options.failureClass`).
 *
 * @param fn - the operation; it receives `{ attempt, signal, elapsedMs }`
 * @param policy - a {@link RetryPolicy}, or some of its fields over {@link DEFAULT_POLICY}; validated (throws
 *   `InvalidPolicyError` naming the field and the rule)
 * @example
 * ```ts
 * const res = await retry(({ signal }) => fetch(url, { signal }), { maxAttempts: 4, totalBudgetMs: 10_000 }, {
 *   retryOnResult: (r) => r.status === 429 || r.status >= 500,
 * });
 * ```
 */
export function retry<T>(
  fn: (context: AttemptContext) => T | Promise<T>,
  policy: Partial<RetryPolicy> = NO_OVERRIDES,
  options: RetryOptions<T> = {},
): Promise<T> {
  // The first attempt of a call without a budget runs here, outside any async function: a first try that succeeds
  // (most calls) then costs one promise reaction instead of an async frame, its await and its settling. Everything
  // else (a budget, a failure to retry) goes through `retryLoop`, which a failed first attempt enters already made.
  let p: RetryPolicy;
  try {
    p = resolvePolicy(policy);
  } catch (error) {
    return Promise.reject(error);
  }
  if (p.totalBudgetMs !== undefined) return retryLoop(fn, p, options, undefined);
  const clock = options.clock ?? systemClock;
  const { signal, breaker } = options;
  let context: Context;
  let pending: T | Promise<T>;
  const start = clock.now();
  try {
    signal?.throwIfAborted();
    if (breaker && !breaker.tryAcquire()) throw breaker.openError();
    options.retryBudget?.recordAttempt();
    context = new Context(1, 0, signal);
  } catch (error) {
    return Promise.reject(error);
  }
  try {
    pending = fn(context);
  } catch (error) {
    return retryLoop(fn, p, options, { start, context, error });
  }
  return Promise.resolve(pending).then(
    (result) => {
      let again: boolean | undefined;
      try {
        again = options.retryOnResult?.(result, context);
      } catch (error) {
        // As in the loop: a hook that throws fails the attempt with its error, which is then classified.
        return retryLoop(fn, p, options, { start, context, error });
      }
      if (again) return retryLoop(fn, p, options, { start, context, result });
      breaker?.onSuccess();
      if (options.onAttempt) {
        const elapsedMs = clock.now() - start;
        report(options.onAttempt, { attempt: 1, outcome: AttemptOutcome.SUCCESS_FIRST_TRY, elapsedMs, durationMs: elapsedMs });
      }
      return result;
    },
    (error: unknown) => retryLoop(fn, p, options, { start, context, error }),
  );
}

/** A first attempt that `retry` made itself, handed to {@link retryLoop}: what it ended with. */
type FirstAttempt<T> = { start: number; context: Context } & ({ error: unknown } | { result: T });

/** Calls an `onAttempt` hook; what it throws is ignored. */
function report(onAttempt: (event: AttemptEvent) => void, event: AttemptEvent): void {
  try {
    onAttempt(event);
  } catch {
    // A metrics hook must never change the outcome of the call it observes.
  }
}

/**
 * {@link retry}'s loop, from the first attempt (a call with a budget), or after `first`, a first attempt `retry` made
 * itself that failed or returned a result to retry (its breaker turn taken and its budget deposit made).
 */
async function retryLoop<T>(
  fn: (context: AttemptContext) => T | Promise<T>,
  p: RetryPolicy,
  options: RetryOptions<T>,
  first: FirstAttempt<T> | undefined,
): Promise<T> {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const wallClock = options.wallClock ?? Date.now;
  const retryOnError = options.retryOnError ?? isRetryableError;
  const findHint = options.retryAfter ?? retryAfterHint;
  const classify = p.backoffByClass === undefined ? undefined : (options.failureClass ?? failureClassOf);
  const { signal, breaker, retryBudget, onAttempt } = options;
  const reportEvent = onAttempt ? (event: AttemptEvent) => report(onAttempt, event) : undefined;
  const start = first?.start ?? clock.now();
  const budgetMs = p.totalBudgetMs;
  let attemptStart = start;
  let previousDelayMs = 0;
  let made = first;
  /** The failure the last sleep followed: what a call that runs out of budget while it sleeps gives up with. */
  let lastFailure: unknown;
  for (let attempt = 1; ; attempt++) {
    let timed: DeadlineContext | undefined;
    let context: AttemptContext;
    if (made !== undefined) {
      context = made.context;
    } else {
      signal?.throwIfAborted();
      if (attempt > 1) {
        attemptStart = clock.now();
        // A sleep can end late (a busy event loop, a suspended process): no attempt starts once the budget is spent.
        if (budgetMs !== undefined && attemptStart - start >= budgetMs) {
          throw new RetryExhaustedError({ attempts: attempt - 1, elapsedMs: attemptStart - start, reason: GiveUpReason.BUDGET, lastError: lastFailure });
        }
      }
      if (breaker && !breaker.tryAcquire()) {
        if (attempt === 1) throw breaker.openError();
        throw new RetryExhaustedError({ attempts: attempt - 1, elapsedMs: clock.now() - start, reason: GiveUpReason.CIRCUIT_OPEN, lastError: breaker.openError() });
      }
      if (attempt === 1) retryBudget?.recordAttempt();

      // Only a call with a budget pays for a deadline on each attempt; the common first try stays as cheap as without.
      timed = budgetMs === undefined ? undefined : new DeadlineContext(attempt, attemptStart - start, signal, budgetMs);
      context = timed ?? new Context(attempt, attemptStart - start, signal);
    }
    let failure: unknown;
    try {
      if (made !== undefined) {
        const outcome = made;
        made = undefined;
        if ('error' in outcome) throw outcome.error;
        failure = new RetryableResultError(outcome.result);
      } else {
        const result = timed === undefined ? await fn(context) : await timed.run(fn, clock, start + timed.budgetMs - clock.now());
        if (!options.retryOnResult?.(result, context)) {
          breaker?.onSuccess();
          if (reportEvent) {
            const now = clock.now();
            reportEvent({
              attempt,
              outcome: attempt === 1 ? AttemptOutcome.SUCCESS_FIRST_TRY : AttemptOutcome.SUCCESS_AFTER_RETRY,
              elapsedMs: now - start,
              durationMs: now - attemptStart,
            });
          }
          return result;
        }
        failure = new RetryableResultError(result);
      }
    } catch (error) {
      if (timed?.ranOut) {
        // The budget ran out mid-attempt: whatever the attempt ended with, it ends the call.
        breaker?.release();
        const now = clock.now();
        const lastError = timed.ranOutReason;
        reportEvent?.({ attempt, outcome: AttemptOutcome.EXHAUSTED, reason: GiveUpReason.BUDGET, elapsedMs: now - start, durationMs: now - attemptStart, error: lastError });
        throw new RetryExhaustedError({ attempts: attempt, elapsedMs: now - start, reason: GiveUpReason.BUDGET, lastError });
      }
      if (signal?.aborted || !retryOnError(error, context)) {
        breaker?.release();
        if (reportEvent) {
          const now = clock.now();
          reportEvent({ attempt, outcome: AttemptOutcome.NON_RETRYABLE, elapsedMs: now - start, durationMs: now - attemptStart, error });
        }
        throw error;
      }
      failure = error;
    }
    breaker?.onFailure();

    const now = clock.now();
    const elapsedMs = now - start;
    const durationMs = now - attemptStart;
    const hintSource = failure instanceof RetryableResultError ? failure.result : failure;
    const plan = planRetry({
      policy: p,
      attemptsMade: attempt,
      elapsedMs,
      previousDelayMs,
      retryAfterMs: findHint(hintSource, wallClock()),
      // Someone is waiting on this call: a hint past the schedule's longest wait gives up instead of holding them.
      capRetryAfterAtMaxDelay: true,
      random,
      failureClass: classify?.(hintSource),
    });
    let reason: GiveUpReason | undefined = plan.retry ? undefined : plan.reason;
    // An attempt that would start with no budget left would be aborted as it starts: give up now, without the sleep.
    if (plan.retry && budgetMs !== undefined && elapsedMs + plan.delayMs >= budgetMs) reason = GiveUpReason.BUDGET;
    if (plan.retry && reason === undefined && breaker && breaker.retryAfterMs() > plan.delayMs) reason = GiveUpReason.CIRCUIT_OPEN;
    if (plan.retry && reason === undefined && retryBudget && !retryBudget.tryWithdraw()) reason = GiveUpReason.RETRY_BUDGET_DENIED;
    if (!plan.retry || reason !== undefined) {
      const giveUp = reason ?? GiveUpReason.MAX_ATTEMPTS;
      reportEvent?.({ attempt, outcome: AttemptOutcome.EXHAUSTED, reason: giveUp, elapsedMs, durationMs, error: failure });
      throw new RetryExhaustedError({ attempts: attempt, elapsedMs, reason: giveUp, lastError: failure });
    }

    reportEvent?.({ attempt, outcome: AttemptOutcome.RETRY_SCHEDULED, delayMs: plan.delayMs, hinted: plan.hinted, elapsedMs, durationMs, error: failure });
    discardBody(hintSource);
    previousDelayMs = plan.previousDelayMs;
    lastFailure = failure;
    await clock.sleep(plan.delayMs, signal);
  }
}

/**
 * The context handed to `fn`. Most callers pass no signal and most functions never read one, so the
 * never-aborting stand-in is made only on first read: an AbortController costs microseconds on Node 20, more
 * than the rest of a first try.
 */
class Context implements AttemptContext {
  #signal: AbortSignal | undefined;
  constructor(
    readonly attempt: number,
    readonly elapsedMs: number,
    signal: AbortSignal | undefined,
  ) {
    this.#signal = signal;
  }
  get signal(): AbortSignal {
    return (this.#signal ??= new AbortController().signal);
  }
}

/**
 * The context of an attempt of a call with a budget. Its signal, made on first read like {@link Context}'s, follows
 * the caller's and aborts when the budget runs out during the attempt; {@link DeadlineContext.run} sets that deadline.
 */
class DeadlineContext implements AttemptContext {
  #controller: AbortController | undefined;
  #unlink: (() => void) | undefined;
  /** The budget ran out before the attempt ended; its signal is (or will be, once read) aborted with `ranOutReason`. */
  ranOut = false;
  ranOutReason: unknown;

  constructor(
    readonly attempt: number,
    readonly elapsedMs: number,
    private readonly outer: AbortSignal | undefined,
    /** The policy's `totalBudgetMs`, for the abort reason. */
    readonly budgetMs: number,
  ) {}

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const controller = new AbortController();
      this.#controller = controller;
      const outer = this.outer;
      if (this.ranOut) controller.abort(this.ranOutReason);
      else if (outer?.aborted) controller.abort(outer.reason);
      else if (outer !== undefined) {
        const follow = () => controller.abort(outer.reason);
        outer.addEventListener('abort', follow, { once: true });
        // A caller's signal often outlives many calls: leave no listener behind on it.
        this.#unlink = () => outer.removeEventListener('abort', follow);
      }
    }
    return this.#controller.signal;
  }

  /**
   * Runs `fn` against a deadline `ms` from now on `clock`: if it passes first, the signal aborts and the returned promise
   * rejects with the abort reason at once, leaving `fn` to finish (or not) on its own. A result returned synchronously
   * has nothing in flight: it sets no deadline.
   */
  run<T>(fn: (context: AttemptContext) => T | Promise<T>, clock: Clock, ms: number): T | Promise<T> {
    let pending: T | Promise<T>;
    try {
      pending = fn(this);
    } catch (error) {
      this.#unlink?.();
      throw error;
    }
    if (typeof (pending as { then?: unknown } | null)?.then !== 'function') {
      this.#unlink?.();
      return pending;
    }
    // One promise and a timer, not an async function racing a second promise: this runs on every attempt of a call
    // with a budget, and measured at half the cost.
    return new Promise<T>((resolve, reject) => {
      let timer: unknown;
      let sleeping: AbortController | undefined;
      const done = () => {
        if (timer !== undefined) clock.clearTimer?.(timer);
        sleeping?.abort();
        this.#unlink?.();
      };
      const expire = () => {
        this.ranOut = true;
        this.ranOutReason = new DOMException(`the total budget of ${this.budgetMs} ms ran out during attempt ${this.attempt}`, 'TimeoutError');
        this.#unlink?.();
        this.#controller?.abort(this.ranOutReason);
        reject(this.ranOutReason);
      };
      if (clock.setTimer !== undefined) {
        timer = clock.setTimer(Math.max(0, ms), expire);
        // A watchdog, not work: it must not keep alive a process with nothing else to wait for (an attempt's own I/O
        // does that), and on Node 20 an unref'd timer costs less than half of a ref'd one (~0.3 µs against ~0.7 µs).
        (timer as { unref?: () => unknown } | null)?.unref?.();
      } else {
        // A clock without timers: a sleep stands in, cancelled when the attempt ends first.
        sleeping = new AbortController();
        clock.sleep(Math.max(0, ms), sleeping.signal).then(expire, () => undefined);
      }
      (pending as Promise<T>).then(
        (value) => {
          done();
          resolve(value);
        },
        (error: unknown) => {
          done();
          reject(error);
        },
      );
    });
  }
}

const NO_OVERRIDES: Partial<RetryPolicy> = Object.freeze({});

interface ResolvedPolicy {
  /** A copy of the fields the policy object had when it was validated. */
  seen: Partial<RetryPolicy>;
  policy: RetryPolicy;
}
const resolved = new WeakMap<object, ResolvedPolicy>();

/**
 * The validated policy for `retry()`'s argument. Validation is cached per policy object (a policy is usually a
 * constant reused for every call) and re-done when a policy field of that object changed since. Policies are
 * values: a `retryableStatusCodes` array or a `backoffByClass` changed in place, or an unknown key added after first
 * use, is not noticed.
 */
function resolvePolicy(input: Partial<RetryPolicy>): RetryPolicy {
  const cached = resolved.get(input);
  if (cached && unchanged(cached, input)) return cached.policy;
  const policy = assertValidPolicy({ ...DEFAULT_POLICY, ...input });
  resolved.set(input, { seen: { ...input }, policy });
  return policy;
}

function unchanged(cached: ResolvedPolicy, input: Partial<RetryPolicy>): boolean {
  // Field by field, not a loop over keys: this runs on every call, and a keyed loop costs more than the attempt.
  const seen = cached.seen;
  return (
    seen.maxAttempts === input.maxAttempts &&
    seen.backoffType === input.backoffType &&
    seen.initialDelayMs === input.initialDelayMs &&
    seen.multiplier === input.multiplier &&
    seen.maxDelayMs === input.maxDelayMs &&
    seen.jitterType === input.jitterType &&
    seen.totalBudgetMs === input.totalBudgetMs &&
    seen.estimatedCallMs === input.estimatedCallMs &&
    seen.retryableStatusCodes === input.retryableStatusCodes &&
    seen.backoffByClass === input.backoffByClass
  );
}

/** Frees the connection behind a retried HTTP response (fetch `Response`, undici) instead of waiting for GC. */
function discardBody(result: unknown): void {
  const body = (result as { body?: { cancel?: () => Promise<void>; dump?: () => Promise<void> } } | null)?.body;
  if (!body || typeof body !== 'object') return;
  const discard = typeof body.cancel === 'function' ? body.cancel.bind(body) : typeof body.dump === 'function' ? body.dump.bind(body) : undefined;
  discard?.().catch(() => {
    // The body may already be consumed or errored; nothing to free then.
  });
}
