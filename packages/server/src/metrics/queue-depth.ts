import type { TaskStatus } from '@retryd/core';
import type { Store } from '../store/store.js';
import { ScrapeCache } from './scrape-cache.js';

/** How long one store read serves scrapes, in ms: at most one count per this interval, however often scraped. */
export const QUEUE_DEPTH_CACHE_MS = 5_000;

/**
 * The number of tasks in each status across every tenant (`store.admin.countByStatus()`), counted at scrape time and
 * kept for `cacheMs` (a {@link ScrapeCache}), so that scrapes cost the store at most one count per interval.
 */
export class QueueDepth extends ScrapeCache<Record<TaskStatus, number>> {
  constructor(store: Pick<Store, 'admin'>, now: () => number, cacheMs = QUEUE_DEPTH_CACHE_MS) {
    super(() => store.admin.countByStatus(), now, cacheMs);
  }
}
