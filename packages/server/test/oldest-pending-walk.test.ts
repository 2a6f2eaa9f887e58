import { describe, expect, it } from 'vitest';
import { OLDEST_PENDING_PAGE as PAGE, firstPendingPerTarget, type PendingPage } from '../src/store/oldest-pending.js';

// The walk behind AdminReads.oldestPending, on a tenant's live tasks as an array (each store's conformance cases run
// it on the real indexes): where it stops, and what it answers when its bound cuts it short.

/** Pages of `tasks` (oldest first) as a store reads them, counting the pages read. */
function pagesOf(tasks: readonly { targetKey: string; createdAt: number; pending?: boolean }[]) {
  const reads: number[] = [];
  const readPage = async (after: number | undefined, size: number): Promise<PendingPage<number>> => {
    const start = after ?? 0;
    const page = tasks.slice(start, start + size);
    reads.push(page.length);
    return {
      pending: page.filter((task) => task.pending !== false),
      read: page.length,
      next: start + size < tasks.length ? start + size : undefined,
    };
  };
  return { readPage, reads };
}

describe('firstPendingPerTarget', () => {
  it("keeps each target's first task met, skips tasks not PENDING, and stops reading once `limit` targets are known", async () => {
    const tasks = [
      { targetKey: 'a', createdAt: 1, pending: false },
      { targetKey: 'b', createdAt: 2 },
      { targetKey: 'a', createdAt: 3 },
      { targetKey: 'b', createdAt: 4 },
      ...Array.from({ length: 1_000 }, (_, i) => ({ targetKey: 'c', createdAt: 5 + i })),
      { targetKey: 'd', createdAt: 2_000 },
    ];
    const { readPage, reads } = pagesOf(tasks);
    expect([...(await firstPendingPerTarget(readPage, 2))]).toEqual([
      ['b', 2],
      ['a', 3],
    ]);
    expect(reads).toEqual([PAGE]);
    const all = pagesOf(tasks);
    expect([...(await firstPendingPerTarget(all.readPage, 10))]).toEqual([
      ['b', 2],
      ['a', 3],
      ['c', 5],
      ['d', 2_000],
    ]);
    // Page after page to the last task, shorter than a page.
    expect(all.reads).toEqual([...Array<number>(Math.floor(tasks.length / PAGE)).fill(PAGE), tasks.length % PAGE]);
  });

  it('answers the targets met within its bound when one backlog is longer: each with its true oldest', async () => {
    const backlog = Array.from({ length: 3 * PAGE }, (_, i) => ({ targetKey: 'stuck', createdAt: i }));
    const { readPage, reads } = pagesOf([...backlog, { targetKey: 'late', createdAt: 3 * PAGE }]);
    expect([...(await firstPendingPerTarget(readPage, 100, 2 * PAGE + 10))]).toEqual([['stuck', 0]]);
    // The bound, and not one entry more.
    expect(reads).toEqual([PAGE, PAGE, 10]);
  });
});
