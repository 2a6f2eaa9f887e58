import type { CircuitBreaker } from '../breaker/circuit-breaker.js';
import type { RetryBudget } from '../budget/retry-budget.js';
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
  /** Aborts when the caller's signal does: pass it to `fetch` and friends. */
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
 * - Each sleep is clipped so the next attempt starts no later than `totalBudgetMs − estimatedCallMs`; with less
 *   than `estimatedCallMs` left it gives up at once. A Retry-After hint replaces the computed delay (no jitter
 *   added) and one that lands past the budget ends the retries now rather than sleeping past the deadline.
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
export async function retry<T>(
  fn: (context: AttemptContext) => T | Promise<T>,
  policy: Partial<RetryPolicy> = NO_OVERRIDES,
  options: RetryOptions<T> = {},
): Promise<T> {
  const p = resolvePolicy(policy);
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const wallClock = options.wallClock ?? Date.now;
  const retryOnError = options.retryOnError ?? isRetryableError;
  const findHint = options.retryAfter ?? retryAfterHint;
  const { signal, breaker, retryBudget, onAttempt } = options;
  const report = onAttempt
    ? (event: AttemptEvent) => {
        try {
          onAttempt(event);
        } catch {
          // A metrics hook must never change the outcome of the call it observes.
        }
      }
    : undefined;
  const start = clock.now();
  let attemptStart = start;
  let previousDelayMs = 0;
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    if (breaker && !breaker.tryAcquire()) {
      if (attempt === 1) throw breaker.openError();
      throw new RetryExhaustedError({ attempts: attempt - 1, elapsedMs: clock.now() - start, reason: GiveUpReason.CIRCUIT_OPEN, lastError: breaker.openError() });
    }
    if (attempt === 1) retryBudget?.recordAttempt();
    else attemptStart = clock.now();

    const context = new Context(attempt, attemptStart - start, signal);
    let failure: unknown;
    try {
      const result = await fn(context);
      if (!options.retryOnResult?.(result, context)) {
        breaker?.onSuccess();
        if (report) {
          const now = clock.now();
          report({
            attempt,
            outcome: attempt === 1 ? AttemptOutcome.SUCCESS_FIRST_TRY : AttemptOutcome.SUCCESS_AFTER_RETRY,
            elapsedMs: now - start,
            durationMs: now - attemptStart,
          });
        }
        return result;
      }
      failure = new RetryableResultError(result);
    } catch (error) {
      if (signal?.aborted || !retryOnError(error, context)) {
        breaker?.release();
        if (report) {
          const now = clock.now();
          report({ attempt, outcome: AttemptOutcome.NON_RETRYABLE, elapsedMs: now - start, durationMs: now - attemptStart, error });
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
    const plan = planRetry({ policy: p, attemptsMade: attempt, elapsedMs, previousDelayMs, retryAfterMs: findHint(hintSource, wallClock()), random });
    let reason: GiveUpReason | undefined = plan.retry ? undefined : plan.reason;
    if (plan.retry && breaker && breaker.retryAfterMs() > plan.delayMs) reason = GiveUpReason.CIRCUIT_OPEN;
    if (plan.retry && reason === undefined && retryBudget && !retryBudget.tryWithdraw()) reason = GiveUpReason.RETRY_BUDGET_DENIED;
    if (!plan.retry || reason !== undefined) {
      const giveUp = reason ?? GiveUpReason.MAX_ATTEMPTS;
      report?.({ attempt, outcome: AttemptOutcome.EXHAUSTED, reason: giveUp, elapsedMs, durationMs, error: failure });
      throw new RetryExhaustedError({ attempts: attempt, elapsedMs, reason: giveUp, lastError: failure });
    }

    report?.({ attempt, outcome: AttemptOutcome.RETRY_SCHEDULED, delayMs: plan.delayMs, hinted: plan.hinted, elapsedMs, durationMs, error: failure });
    discardBody(hintSource);
    previousDelayMs = plan.previousDelayMs;
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
 * values: a `retryableStatusCodes` array changed in place, or an unknown key added after first use, is not noticed.
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
    seen.retryableStatusCodes === input.retryableStatusCodes
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
