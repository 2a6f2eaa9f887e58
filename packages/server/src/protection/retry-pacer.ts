import { RetryBudget, type Clock } from '@retryd/core';
import { retryBudgetOptionsOf } from './core-options.js';
import type { RetryBudgetSettings } from './target-settings.js';

/**
 * The retry budget of one target on one instance, with a pacer for the retries it refuses: `@retryd/core`'s
 * `RetryBudget` (first attempts deposit `retryRatio` of a retry, each scheduled retry withdraws one, plus a floor of
 * `minRetriesPerSecond`, over `windowMs`). A retry over budget is not dropped (the task keeps its attempts and its
 * deadline) but waits: it takes the next free slot of a pacer running at the floor rate, so a backlog of refused
 * retries goes out spread at that rate instead of landing all at once when its backoff ends. First attempts always go.
 */
export class RetryPacer {
  private readonly budget: RetryBudget;
  private readonly intervalMs: number;
  private nextSlotAt = -Infinity;

  constructor(settings: RetryBudgetSettings, clock: Clock) {
    this.budget = new RetryBudget({ ...retryBudgetOptionsOf(settings), clock });
    // With no floor, refused retries still go, one per window, rather than never.
    this.intervalMs = settings.minRetriesPerSecond > 0 ? 1_000 / settings.minRetriesPerSecond : settings.windowMs;
  }

  /** A first attempt went out: it earns `retryRatio` of a retry. */
  firstAttempt(): void {
    this.budget.recordAttempt();
  }

  /** When a retry that its backoff made due at `dueAt` may go: then, if the budget grants it, else its pacer slot. */
  pace(dueAt: number): number {
    if (this.budget.tryWithdraw()) return dueAt;
    const slot = Math.max(dueAt, this.nextSlotAt);
    this.nextSlotAt = slot + this.intervalMs;
    // Whole ms, never earlier than the slot: stores keep epoch-ms integers.
    return Math.ceil(slot);
  }
}
