import { expect, it } from 'vitest';
import type { RetryTask } from '../../src/domain/task.js';
import { T0, finalOutcome, makeAttempt, makeTask, retryOutcome } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { claimById, insertAll, insertAllStored } from './helpers.js';

const A = 'https://a.example.com';
const B = 'https://b.example.com';
const C = 'https://c.example.com';
const D = 'https://d.example.com';
const HOUR = 3_600_000;

/** A PENDING task for `origin` created at `createdAt`, due then unless `due` says otherwise. */
function createdAt(origin: string, at: number, overrides: Partial<RetryTask> = {}): RetryTask {
  return makeTask({ targetUrl: `${origin}/hook`, createdAt: at, updatedAt: at, nextAttemptAt: at, ...overrides });
}

export function oldestPendingCases(store: CurrentStore): void {
  it("answers each target's oldest PENDING task, oldest first: a far retry counts, IN_FLIGHT and finished tasks do not", async () => {
    const aInFlight = createdAt(A, T0 - 4_000);
    const aOldest = createdAt(A, T0 - 3_000);
    const cInFlight = createdAt(C, T0 - 9_000);
    await insertAllStored(store(), [
      createdAt(A, T0 - 5_000, { status: 'SUCCEEDED', nextAttemptAt: null }),
      createdAt(D, T0 - 8_000, { status: 'FAILED', nextAttemptAt: null }),
      aInFlight,
      createdAt(A, T0 - 1_000, { nextAttemptAt: T0 + HOUR }),
      aOldest,
      // Waiting on a retry a day ahead: still PENDING, still waiting.
      createdAt(B, T0 - 2_000, { nextAttemptAt: T0 + 24 * HOUR }),
      cInFlight,
    ]);
    await claimById(store(), cInFlight.taskId, T0 - 9_000);
    await claimById(store(), aInFlight.taskId, T0 - 4_000);
    expect(await store().admin.oldestPending(10)).toEqual([
      { tenantId: 'default', targetKey: A, createdAt: T0 - 3_000 },
      { tenantId: 'default', targetKey: B, createdAt: T0 - 2_000 },
    ]);

    // A's oldest is claimed: its next oldest PENDING task stands for it. Back to PENDING on a retry about an hour ahead, it
    // counts again; once it ends, it no longer does.
    const claimed = await claimById(store(), aOldest.taskId, T0);
    expect(await store().admin.oldestPending(10)).toEqual([
      { tenantId: 'default', targetKey: B, createdAt: T0 - 2_000 },
      { tenantId: 'default', targetKey: A, createdAt: T0 - 1_000 },
    ]);
    const ref = { tenantId: 'default', taskId: claimed.taskId, fencingToken: claimed.fencingToken };
    await store().completeAttempts([{ ...ref, attempt: makeAttempt(claimed), next: retryOutcome(claimed, T0 + HOUR - 1) }], T0 + 10);
    expect((await store().admin.oldestPending(10))[0]).toEqual({ tenantId: 'default', targetKey: A, createdAt: T0 - 3_000 });
    const again = await claimById(store(), aOldest.taskId, T0 + HOUR - 1);
    await store().completeAttempts([{ ...ref, fencingToken: again.fencingToken, next: finalOutcome(again, 'SUCCEEDED') }], T0 + HOUR);
    expect(await store().admin.oldestPending(10)).toEqual([
      { tenantId: 'default', targetKey: B, createdAt: T0 - 2_000 },
      { tenantId: 'default', targetKey: A, createdAt: T0 - 1_000 },
    ]);
  });

  it('answers at most `limit` targets, the oldest, and finds targets behind a long backlog of another', async () => {
    // 300 tasks of A older than every other target's: the others lie past the first page of any store's walk.
    const backlog = Array.from({ length: 300 }, (_, i) => createdAt(A, T0 - 10_000 + i));
    const others = [createdAt(C, T0 - 100), createdAt(B, T0 - 200), createdAt(B, T0 - 50), createdAt(D, T0 - 10)];
    await insertAll(store(), [...others, ...backlog]);
    expect(await store().admin.oldestPending(2)).toEqual([
      { tenantId: 'default', targetKey: A, createdAt: T0 - 10_000 },
      { tenantId: 'default', targetKey: B, createdAt: T0 - 200 },
    ]);
    expect((await store().admin.oldestPending(100)).map((entry) => entry.targetKey)).toEqual([A, B, C, D]);
    await expect(store().admin.oldestPending(0)).rejects.toThrow('Expected `limit` to be an integer >= 1, got 0.');
  });

  it("tells tenants apart: one target in two tenants is two entries, each with its tenant's oldest", async () => {
    expect(await store().admin.oldestPending(10)).toEqual([]);
    await insertAll(store(), [
      createdAt(A, T0 - 100, { tenantId: 'tenant-a' }),
      createdAt(A, T0 - 200, { tenantId: 'tenant-b' }),
      createdAt(A, T0 - 20, { tenantId: 'tenant-b' }),
      createdAt(B, T0 - 50, { tenantId: 'tenant-b' }),
      // Created at the same instant as tenant-b's B: ties go by tenant, then target.
      createdAt(C, T0 - 50, { tenantId: 'tenant-a' }),
    ]);
    expect(await store().admin.oldestPending(10)).toEqual([
      { tenantId: 'tenant-b', targetKey: A, createdAt: T0 - 200 },
      { tenantId: 'tenant-a', targetKey: A, createdAt: T0 - 100 },
      { tenantId: 'tenant-a', targetKey: C, createdAt: T0 - 50 },
      { tenantId: 'tenant-b', targetKey: B, createdAt: T0 - 50 },
    ]);
    expect(await store().admin.oldestPending(1)).toEqual([{ tenantId: 'tenant-b', targetKey: A, createdAt: T0 - 200 }]);
  });
}
