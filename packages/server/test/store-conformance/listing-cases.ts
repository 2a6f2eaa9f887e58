import { expect, it } from 'vitest';
import type { TaskStatus } from '@retryd/core';
import type { RetryTask } from '../../src/domain/task.js';
import { TARGET_SCAN_BUDGET, type Store, type TaskQuery } from '../../src/store/store.js';
import { T0, makeTask } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { insertAll, insertAllStored, newestFirst } from './helpers.js';

/** Follows `nextCursor` to the end, returning every page. Stops with an error rather than loop forever. */
async function walk(store: Store, query: Omit<TaskQuery, 'cursor'>): Promise<RetryTask[][]> {
  const pages: RetryTask[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listTasks(cursor === undefined ? query : { ...query, cursor });
    pages.push(page.items);
    cursor = page.nextCursor;
    if (pages.length > 100) throw new Error('listTasks did not reach its last page');
  } while (cursor !== undefined);
  return pages;
}

const ids = (tasks: readonly RetryTask[]) => tasks.map((t) => t.taskId);

function terminal(status: TaskStatus, overrides: Partial<RetryTask> = {}): RetryTask {
  return makeTask({ status, nextAttemptAt: null, ...overrides });
}

export function listingCases(store: CurrentStore): void {
  it('walks every task newest first with cursors, without duplicates or gaps', async () => {
    // Three tasks per createdAt, so the taskId tie-break is exercised at page boundaries.
    const tasks = Array.from({ length: 25 }, (_, i) => makeTask({ createdAt: T0 + Math.floor(i / 3) }));
    await insertAll(store(), [...tasks, makeTask({ tenantId: 'elsewhere' })]);
    const expected = ids([...tasks].sort(newestFirst));

    const pages = await walk(store(), { tenantId: 'default', limit: 7 });
    expect(pages.map((p) => p.length)).toEqual([7, 7, 7, 4]);
    expect(ids(pages.flat())).toEqual(expected);

    // A count that is a multiple of the page size ends without an empty page.
    const even = await walk(store(), { tenantId: 'default', limit: 5 });
    expect(even.map((p) => p.length)).toEqual([5, 5, 5, 5, 5]);
    expect(ids(even.flat())).toEqual(expected);
  });

  it('filters by one status, by several statuses and by policy', async () => {
    let at = T0;
    const next = () => ({ createdAt: (at += 10) });
    const pendingA = [makeTask({ policyId: 'a', ...next() }), makeTask({ policyId: 'a', ...next() })];
    const pendingB = [makeTask({ policyId: 'b', ...next() })];
    const succeeded = [terminal('SUCCEEDED', { policyId: 'a', ...next() }), terminal('SUCCEEDED', next())];
    const failed = [terminal('FAILED', next()), terminal('FAILED', { policyId: 'b', ...next() }), terminal('FAILED', next())];
    const exhausted = [terminal('EXHAUSTED', { policyId: 'a', ...next() }), terminal('EXHAUSTED', next())];
    const oneShot = { maxAttempts: 1, backoffType: 'FIXED', initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitterType: 'NONE' } as const;
    const inline = [makeTask({ policyId: null, policy: oneShot, ...next() })];
    const all = [...pendingA, ...pendingB, ...succeeded, ...failed, ...exhausted, ...inline];
    await insertAllStored(store(), all);
    const expectIds = (tasks: RetryTask[]) => ids([...tasks].sort(newestFirst));
    const list = async (query: Omit<TaskQuery, 'cursor' | 'tenantId' | 'limit'>, limit = 2) =>
      ids((await walk(store(), { tenantId: 'default', limit, ...query })).flat());

    expect(await list({ status: 'FAILED' })).toEqual(expectIds(failed));
    expect(await list({ status: ['FAILED'] }, 10)).toEqual(expectIds(failed));
    expect(await list({ status: ['FAILED', 'EXHAUSTED'] })).toEqual(expectIds([...failed, ...exhausted]));
    expect(await list({ status: ['PENDING', 'SUCCEEDED', 'EXHAUSTED'] }, 3)).toEqual(
      expectIds([...pendingA, ...pendingB, ...inline, ...succeeded, ...exhausted]),
    );
    expect(await list({ status: 'CANCELLED' })).toEqual([]);
    expect(await list({ policyId: 'a' })).toEqual(
      expectIds([...pendingA, succeeded[0], exhausted[0]].filter((t) => t !== undefined)),
    );
    expect(await list({ policyId: 'a', status: 'PENDING' })).toEqual(expectIds(pendingA));
    expect(await list({ policyId: 'b', status: ['FAILED', 'PENDING'] }, 1)).toEqual(
      expectIds([...pendingB, failed[1]].filter((t) => t !== undefined)),
    );
    expect(await list({ policyId: 'missing' })).toEqual([]);
    expect(await list({})).toEqual(expectIds(all));
  });

  it('filters by target, alone and with status and policy, through more tasks than one page may examine', async () => {
    const other = 'https://other.example.com/x';
    const mine = 'https://mine.example.com/pay';
    // The target's tasks are spread through a listing longer than TARGET_SCAN_BUDGET: pages may come back short (Redis
    // examines at most that many tasks a page), but the walk finds every one of them, in order, and nothing else.
    const total = TARGET_SCAN_BUDGET + 300;
    const spots = new Map<number, RetryTask>([
      [5, makeTask({ targetUrl: mine, createdAt: T0 + 5 })],
      [1_000, terminal('FAILED', { targetUrl: mine, createdAt: T0 + 1_000 })],
      [1_001, terminal('EXHAUSTED', { targetUrl: mine, policyId: 'a', createdAt: T0 + 1_001 })],
      [total - 3, terminal('FAILED', { targetUrl: mine, createdAt: T0 + total - 3 })],
    ]);
    const tasks = Array.from({ length: total }, (_, i) => spots.get(i) ?? terminal('FAILED', { targetUrl: other, createdAt: T0 + i }));
    await insertAllStored(store(), [...tasks, makeTask({ tenantId: 'elsewhere', targetUrl: mine })]);
    const mineKey = 'https://mine.example.com';
    const expected = (keep: (t: RetryTask) => boolean) => ids([...spots.values()].filter(keep).sort(newestFirst));
    const list = async (query: Omit<TaskQuery, 'cursor' | 'tenantId' | 'limit'>, limit = 2) =>
      ids((await walk(store(), { tenantId: 'default', limit, ...query })).flat());

    expect(await list({ targetKey: mineKey })).toEqual(expected(() => true));
    expect(await list({ targetKey: mineKey, status: ['FAILED', 'EXHAUSTED'] }, 50)).toEqual(expected((t) => t.status !== 'PENDING'));
    expect(await list({ targetKey: mineKey, policyId: 'a' })).toEqual(expected((t) => t.policyId === 'a'));
    expect(await list({ targetKey: mineKey, status: 'PENDING' })).toEqual(expected((t) => t.status === 'PENDING'));
    expect(await list({ targetKey: 'https://none.example.com' }, 1_000)).toEqual([]);
    const first = await store().listTasks({ tenantId: 'default', limit: 1, targetKey: mineKey });
    expect(ids(first.items)).toEqual(expected(() => true).slice(0, 1));
    expect(first.nextCursor).toBeDefined();
  });

  it('lists each task under its current status through claims, retries, ends, cancels and replays', async () => {
    const [a, b, c, d] = [0, 1, 2, 3].map((i) => makeTask({ createdAt: T0 + i, nextAttemptAt: T0 + i }));
    if (a === undefined || b === undefined || c === undefined || d === undefined) throw new Error('four tasks');
    await insertAllStored(store(), [a, b, c, d, terminal('FAILED', { createdAt: T0 + 4 })]);
    const byStatus = async () => {
      const listed: Record<string, string[]> = {};
      for (const status of ['PENDING', 'IN_FLIGHT', 'SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED'] as const) {
        listed[status] = ids((await walk(store(), { tenantId: 'default', limit: 2, status })).flat());
      }
      listed['live'] = ids((await walk(store(), { tenantId: 'default', limit: 2, status: ['IN_FLIGHT', 'PENDING'] })).flat());
      return listed;
    };
    const lease = { leaseMs: 1_000, workerId: 'w' };
    // a, b, c claimed; a retried, b succeeded, c stays in flight; d stays pending and is then cancelled.
    const claims = await store().claimDue(T0 + 2, { limit: 3, ...lease });
    const held = (t: RetryTask) => claims.find((x) => x.taskId === t.taskId) as RetryTask;
    const outcome = (t: RetryTask, status: TaskStatus, nextAttemptAt: number | null) => ({
      tenantId: t.tenantId,
      taskId: t.taskId,
      fencingToken: held(t).fencingToken,
      next: { status, attemptNumber: 1, nextAttemptAt, runStartedAt: T0, lastDelayMs: 0, lastError: null, lastResponseStatus: null, deadLetterReason: null, expiresAt: null },
    });
    await store().completeAttempts([outcome(a, 'PENDING', T0 + 100), outcome(b, 'SUCCEEDED', null)], T0 + 3);
    expect(await byStatus()).toMatchObject({
      PENDING: ids([d, a]),
      IN_FLIGHT: ids([c]),
      SUCCEEDED: ids([b]),
      FAILED: [expect.any(String)],
      live: ids([d, c, a]),
    });

    const pendingD = await store().getTask('default', d.taskId);
    expect(pendingD?.status).toBe('PENDING');
    expect((await store().cancelTask({ tenantId: 'default', taskId: d.taskId }, T0 + 5, T0 + 5 + 60_000)).kind).toBe('applied');
    const dead = (await walk(store(), { tenantId: 'default', limit: 5, status: 'FAILED' })).flat()[0] as RetryTask;
    const replay = { expectedVersion: dead.version, runAttemptOffset: dead.attemptNumber, runStartedAt: null, nextAttemptAt: T0 + 6, updatedAt: T0 + 6 };
    expect((await store().replayTask({ tenantId: 'default', taskId: dead.taskId }, replay)).kind).toBe('applied');
    await store().completeAttempts([outcome(c, 'EXHAUSTED', null)], T0 + 7);
    expect(await byStatus()).toEqual({
      PENDING: ids([dead, a]),
      IN_FLIGHT: [],
      SUCCEEDED: ids([b]),
      FAILED: [],
      EXHAUSTED: ids([c]),
      CANCELLED: ids([d]),
      live: ids([dead, a]),
    });
    expect(ids((await walk(store(), { tenantId: 'default', limit: 3 })).flat())).toEqual(ids([dead, d, c, b, a]));
    const zero = { PENDING: 0, IN_FLIGHT: 0, SUCCEEDED: 0, FAILED: 0, EXHAUSTED: 0, CANCELLED: 0 };
    expect(await store().admin.countByStatus('default')).toEqual({ ...zero, PENDING: 2, SUCCEEDED: 1, EXHAUSTED: 1, CANCELLED: 1 });
  });

  it('refuses a cursor it did not make', async () => {
    await insertAll(store(), [makeTask(), makeTask()]);
    await expect(store().listTasks({ tenantId: 'default', limit: 1, cursor: 'not-a-cursor' })).rejects.toThrow();
    await expect(store().listPolicies('default', { limit: 1, cursor: 'not-a-cursor' })).rejects.toThrow();
  });
}
