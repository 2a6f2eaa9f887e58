import { systemClock, type Clock } from '../time/clock.js';
import { assertOptions, clockRule, numberAbove, numberAtLeast, type FieldRule } from '../validation/field-rules.js';

/**
 * How much a {@link RetryBudget} allows. Every field is optional; the defaults are in
 * {@link RETRY_BUDGET_DEFAULTS}: retries may be 10% of first attempts plus 10 per second, over 10 s.
 *
 * @example
 * ```ts
 * // Retries may add at most 20% load, with 5 retries/s always allowed for quiet targets.
 * new RetryBudget({ ratio: 0.2, minRetriesPerSecond: 5 });
 * ```
 */
export interface RetryBudgetOptions {
  /**
   * Retries each first attempt earns: `recordAttempt()` deposits `ratio` of a retry, which counts for
   * `ttlMs`. A finite number `>= 0`, honoured to six decimal places. Default 0.1 (ten first attempts earn
   * one retry). 0 leaves only the floor.
   */
  ratio?: number;
  /**
   * The floor: retries allowed with no first attempts at all, as a rate, so that a target with little
   * traffic can still retry. The budget always holds a reserve of `minRetriesPerSecond × ttlMs / 1000`
   * retries; it never expires, but each retry drawn from it is spent for `ttlMs`. A finite number `>= 0`.
   * Default 10.
   */
  minRetriesPerSecond?: number;
  /** How long a deposit or a withdrawal counts, in ms: `> 0`. Default 10_000. */
  ttlMs?: number;
  /** Source of `now()`. Default {@link systemClock}. */
  clock?: Clock;
}

/** The defaults of {@link RetryBudgetOptions}. */
export const RETRY_BUDGET_DEFAULTS = Object.freeze({
  ratio: 0.1,
  minRetriesPerSecond: 10,
  ttlMs: 10_000,
} as const);

/** {@link RetryBudgetOptions} with the defaults filled in. */
export interface ResolvedRetryBudgetOptions {
  readonly ratio: number;
  readonly minRetriesPerSecond: number;
  readonly ttlMs: number;
  readonly clock: Clock;
}

const RULES: Readonly<Record<keyof RetryBudgetOptions, FieldRule>> = {
  ratio: numberAtLeast(0),
  minRetriesPerSecond: numberAtLeast(0),
  ttlMs: numberAbove(0),
  clock: clockRule,
};

/**
 * Validates options (every broken rule is reported, each naming the option and the rule) and fills in
 * the defaults.
 *
 * @throws RangeError e.g. `ratio must be a finite number >= 0, got -1`
 */
export function resolveRetryBudgetOptions(options?: RetryBudgetOptions): ResolvedRetryBudgetOptions {
  assertOptions('RetryBudget', options, RULES);
  return {
    ratio: options?.ratio ?? RETRY_BUDGET_DEFAULTS.ratio,
    minRetriesPerSecond: options?.minRetriesPerSecond ?? RETRY_BUDGET_DEFAULTS.minRetriesPerSecond,
    ttlMs: options?.ttlMs ?? RETRY_BUDGET_DEFAULTS.ttlMs,
    clock: options?.clock ?? systemClock,
  };
}
