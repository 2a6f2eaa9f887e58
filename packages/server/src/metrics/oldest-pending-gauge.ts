import { Gauge, type Registry } from 'prom-client';
import type { Store } from '../store/store.js';
import type { TenantLabelCap } from './label-cap.js';
import { ScrapeCache } from './scrape-cache.js';

/** What {@link registerOldestPendingGauge} needs. */
export interface OldestPendingGaugeOptions {
  /** Read at scrape time (`admin.oldestPending`), at most once per `cacheMs`. */
  store: Pick<Store, 'admin'>;
  /**
   * The `target` label values, shared with the other per-target metrics (a target reads alike in all of them): its
   * limit is also how many targets the store is asked for.
   */
  targets: TenantLabelCap;
  /** Epoch ms: times the cache and the ages. */
  now: () => number;
  /** How long one read serves scrapes, in ms. */
  cacheMs: number;
  registers: Registry[];
  /** Called with a read that failed: that scrape has no series of the gauge. */
  onError: (error: unknown) => void;
}

/**
 * `retry_oldest_pending_age_seconds{target}`: how long the oldest PENDING task of each target has been waiting (now −
 * its `createdAt`), so that a stuck task shows while it waits rather than in `retry_task_age_seconds` once it ends. A
 * task waiting on a retry scheduled far ahead is waiting, and counts.
 *
 * The store is asked for the targets whose oldest PENDING task is oldest, as many as one tenant's `target` label has
 * places (`admin.oldestPending(targets.limit)`, every tenant's together, cached for `cacheMs`); the age is computed
 * from the cached `createdAt` at each scrape. Labels go through the shared {@link TenantLabelCap}, oldest first: a
 * target its tenant folded into `other` (by this gauge or another per-target metric) reads as `other`, which shows
 * the oldest age of the targets folded into it, as a target key shared by several tenants shows its oldest tenant's.
 * A target with no PENDING task, or younger than the oldest `limit`, has no series.
 */
export function registerOldestPendingGauge(options: OldestPendingGaugeOptions): Gauge<'target'> {
  const { targets, now } = options;
  const oldest = new ScrapeCache(() => options.store.admin.oldestPending(targets.limit), now, options.cacheMs);
  const gauge: Gauge<'target'> = new Gauge({
    name: 'retry_oldest_pending_age_seconds',
    help: `Age (now minus creation) of the oldest PENDING task of each target, waiting on a scheduled retry or not; the ${targets.limit} targets whose oldest is oldest, read from the store at most once per ${options.cacheMs / 1_000} s.`,
    labelNames: ['target'] as const,
    registers: options.registers,
    collect: async () => {
      gauge.reset();
      try {
        const entries = await oldest.read();
        const at = now();
        const ages = new Map<string, number>();
        for (const { tenantId, targetKey, createdAt } of entries) {
          const target = targets.label(tenantId, targetKey);
          ages.set(target, Math.max(ages.get(target) ?? 0, Math.max(0, at - createdAt) / 1_000));
        }
        for (const [target, age] of ages) gauge.set({ target }, age);
      } catch (error) {
        options.onError(error);
      }
    },
  });
  return gauge;
}
