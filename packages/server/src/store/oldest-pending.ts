import type { TargetRef } from './store.js';

/** One target's oldest PENDING task, as `AdminReads.oldestPending` reads it. */
export interface OldestPending extends TargetRef {
  /** When that task was created, epoch ms. */
  createdAt: number;
}

/**
 * Most of one tenant's oldest live tasks `AdminReads.oldestPending` reads before it answers with the targets met so
 * far: the read costs at most this many index entries per tenant, whatever the backlog.
 */
export const OLDEST_PENDING_WALK = 2_000;

/**
 * Entries one page of the walk reads: about the usual answer (100 targets whose tasks interleave) in one or two round
 * trips, and on Redis one short script (it reads a task's record per entry: about 2 ms a page at 100,000 tasks).
 */
export const OLDEST_PENDING_PAGE = 128;

/** One page of a tenant's live tasks, oldest first, as a store reads it for {@link firstPendingPerTarget}. */
export interface PendingPage<C> {
  /** The PENDING tasks among those read, oldest first (`createdAt`, then task id): target and creation time. */
  pending: readonly { targetKey: string; createdAt: number }[];
  /** How many index entries the page read (PENDING or not): what counts against the walk. */
  read: number;
  /** Where the next page starts; undefined when the page read the last entry. */
  next: C | undefined;
}

/**
 * Walks one tenant's PENDING tasks oldest first, a page at a time (`readPage(after, size)`, `after` undefined for the
 * first), and keeps the first task met of each target: since the walk goes by age, that is the target's oldest.
 * Stops once `limit` targets are known (any other target's oldest is younger than theirs), when the tasks run out, or
 * after `walk` entries. Cut short by `walk` (a backlog of one target older than every other target's tasks), it
 * answers the targets met so far, each with its true oldest task: a target left out waits less than every target
 * given. Returns the targets in the order met, oldest first.
 */
export async function firstPendingPerTarget<C>(
  readPage: (after: C | undefined, size: number) => Promise<PendingPage<C>>,
  limit: number,
  walk = OLDEST_PENDING_WALK,
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  let after: C | undefined;
  let left = walk;
  while (left > 0) {
    const page = await readPage(after, Math.min(OLDEST_PENDING_PAGE, left));
    for (const { targetKey, createdAt } of page.pending) {
      if (found.has(targetKey)) continue;
      found.set(targetKey, createdAt);
      if (found.size >= limit) return found;
    }
    if (page.next === undefined || page.read === 0) return found;
    left -= page.read;
    after = page.next;
  }
  return found;
}

/**
 * `AdminReads.oldestPending` over `tenants`: each tenant's walk ({@link firstPendingPerTarget} on the pages
 * `readPage` reads, tenants side by side), then the `limit` oldest targets of all, oldest first; ties by tenant id,
 * then target key, so that every store answers alike.
 *
 * @throws RangeError naming `limit` and the rule when it is not an integer of at least 1
 */
export async function oldestPendingOf<C>(
  tenants: readonly string[],
  readPage: (tenantId: string, after: C | undefined, size: number) => Promise<PendingPage<C>>,
  limit: number,
): Promise<OldestPending[]> {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`Expected \`limit\` to be an integer >= 1, got ${String(limit)}.`);
  const found = await Promise.all(tenants.map((tenantId) => firstPendingPerTarget<C>((after, size) => readPage(tenantId, after, size), limit)));
  const all: OldestPending[] = [];
  tenants.forEach((tenantId, i) => {
    for (const [targetKey, createdAt] of found[i] ?? []) all.push({ tenantId, targetKey, createdAt });
  });
  all.sort((a, b) => a.createdAt - b.createdAt || compare(a.tenantId, b.tenantId) || compare(a.targetKey, b.targetKey));
  return all.slice(0, limit);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
