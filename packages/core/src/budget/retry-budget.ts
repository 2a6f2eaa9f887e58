import type { Clock } from '../time/clock.js';
import { SlidingWindow } from '../window/sliding-window.js';
import { resolveRetryBudgetOptions, type RetryBudgetOptions } from './retry-budget-options.js';
import { BUDGET_WINDOW_COUNTERS, parseRetryBudgetSnapshot, type BudgetWindowCounter, type RetryBudgetSnapshot } from './retry-budget-snapshot.js';

// Balances are kept in millionths of a retry so that they add up exactly: with floating point, 100 deposits
// of 0.29 come to 28.999999999999996 and the 29th earned retry would be refused.
const MICROS = 1_000_000;

/**
 * A retry budget shared by every call to one target, in the style of Finagle's `RetryBudget` and gRPC's
 * retry throttling: retries may be at most `ratio` of first attempts, plus a floor, over a sliding window.
 * When the downstream fails everything, retries stay a bounded fraction of the load instead of multiplying
 * it by `maxAttempts`.
 *
 * - A first attempt calls {@link RetryBudget.recordAttempt}: a deposit worth `ratio` retries.
 * - A retry calls {@link RetryBudget.tryWithdraw}: it is granted when at least one whole retry is available,
 *   and then costs one.
 * - Available = `minRetriesPerSecond × ttlMs / 1000` (the floor, a reserve that never expires)
 *   `+ ratio × deposits − withdrawals`, counting deposits and withdrawals of the last `ttlMs` only.
 * - The window slides in 10 steps of `ttlMs / 10`: an event counts for at least 90% and less than 100% of
 *   `ttlMs`. So at each granted retry at time `t`, the retries granted in `[t − 0.9 × ttlMs, t]` are at most
 *   the floor plus `ratio ×` the first attempts in `(t − ttlMs, t]`.
 *
 * It is a plain object: share one instance between all the calls it should govern. No timers.
 *
 * @example
 * ```ts
 * const budget = new RetryBudget({ ratio: 0.1, minRetriesPerSecond: 10, ttlMs: 10_000 });
 * await retry(call, policy, { retryBudget: budget });
 * // alone: 100 retries per 10 s (the floor); with 5,000 first attempts in 10 s: 100 + 500.
 * ```
 */
export class RetryBudget {
  private readonly clock: Clock;
  private readonly window: SlidingWindow<BudgetWindowCounter>;
  private readonly depositMicros: number;
  private readonly reserveMicros: number;

  /** @throws RangeError naming every invalid option and its rule, e.g. `ratio must be a finite number >= 0, got -1` */
  constructor(options?: RetryBudgetOptions) {
    const o = resolveRetryBudgetOptions(options);
    this.clock = o.clock;
    this.window = new SlidingWindow(o.ttlMs, BUDGET_WINDOW_COUNTERS);
    this.depositMicros = Math.round(o.ratio * MICROS);
    // retries/s × ms × 1000 = (retries/s × s) × 10^6: the floor in millionths of a retry.
    this.reserveMicros = Math.round(o.minRetriesPerSecond * o.ttlMs * 1000);
  }

  /**
   * Restores a budget from {@link RetryBudget.toJSON}'s output (parsed JSON is fine). With the same options and
   * clock it behaves exactly like the original. A window stored with another `ttlMs` is dropped, which
   * grants at most one window of retries that the original would have refused.
   *
   * @throws InvalidSnapshotError naming the first malformed field
   * @throws RangeError for invalid options
   */
  static fromJSON(snapshot: unknown, options?: RetryBudgetOptions): RetryBudget {
    const parsed = parseRetryBudgetSnapshot(snapshot);
    const budget = new RetryBudget(options);
    budget.window.restore(parsed.window);
    return budget;
  }

  /** A first attempt is being made: deposits `ratio` of a retry for `ttlMs`. */
  recordAttempt(): void {
    this.window.add(this.clock.now(), { deposits: 1 });
  }

  /** A retry asks to go ahead. True: granted, one retry spent for `ttlMs`. False: denied, nothing spent. */
  tryWithdraw(): boolean {
    const now = this.clock.now();
    if (this.availableMicros(now) < MICROS) return false;
    this.window.add(now, { withdrawals: 1 });
    return true;
  }

  /** Whole retries that would be granted now (never negative). */
  get balance(): number {
    const micros = this.availableMicros(this.clock.now());
    return micros <= 0 ? 0 : (micros - (micros % MICROS)) / MICROS;
  }

  /** The budget as a plain JSON-safe {@link RetryBudgetSnapshot}, for {@link RetryBudget.fromJSON}. */
  toJSON(): RetryBudgetSnapshot {
    return { v: 1, window: this.window.snapshot(this.clock.now()) };
  }

  private availableMicros(now: number): number {
    const { deposits, withdrawals } = this.window.totals(now);
    // Can go below zero: deposits may slide out of the window before the retries they paid for.
    return this.reserveMicros + deposits * this.depositMicros - withdrawals * MICROS;
  }
}
