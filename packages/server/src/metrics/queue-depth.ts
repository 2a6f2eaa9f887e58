import type { TaskStatus } from '@retryd/core';
import type { Store } from '../store/store.js';

/** How long one count of tasks by status serves scrapes, in ms: at most one count per this interval, however often scraped. */
export const QUEUE_DEPTH_CACHE_MS = 5_000;

/**
 * The number of tasks in each status across every tenant (`store.admin.countByStatus()`), counted at scrape time and
 * kept for `cacheMs`, so that scrapes (several Prometheus servers, a dashboard's refresh) cost the store at most one
 * count per interval, and attempts none. Scrapes that arrive during a count share it.
 */
export class QueueDepth {
  private counts: Record<TaskStatus, number> | undefined;
  private countedAt = -Infinity;
  private counting: Promise<Record<TaskStatus, number>> | undefined;

  constructor(
    private readonly store: Pick<Store, 'admin'>,
    private readonly now: () => number,
    private readonly cacheMs = QUEUE_DEPTH_CACHE_MS,
  ) {}

  /** The counts, at most `cacheMs` old; rejects when the store does (the last counts are then dropped, not served stale). */
  async read(): Promise<Record<TaskStatus, number>> {
    if (this.counts !== undefined && this.now() - this.countedAt < this.cacheMs) return this.counts;
    this.counting ??= this.store.admin
      .countByStatus()
      .then(
        (counts) => {
          this.counts = counts;
          this.countedAt = this.now();
          return counts;
        },
        (error: unknown) => {
          this.counts = undefined;
          throw error;
        },
      )
      .finally(() => (this.counting = undefined));
    return this.counting;
  }
}
