import { expect, it } from 'vitest';
import type { TaskStatus } from '@retryd/core';
import type { RetryTask } from '../../src/domain/task.js';
import type { AttemptCompletion } from '../../src/store/store.js';
import { T0, finalOutcome, makeAttempt, makeTask, retryOutcome } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { claimed, insertAll, insertAllStored } from './helpers.js';

const ref = (task: RetryTask) => ({ tenantId: task.tenantId, taskId: task.taskId });
const page = { limit: 100 };
/** A task that ended in `status`, to be deleted at `expiresAt` (inserted as such: the store takes any status at insert). */
const ended = (status: TaskStatus, expiresAt: number | null, overrides: Partial<RetryTask> = {}) =>
  makeTask({ status, nextAttemptAt: null, attemptNumber: 1, updatedAt: T0 + 1, expiresAt, ...overrides });

function completion(task: RetryTask, next: AttemptCompletion['next']): AttemptCompletion {
  return { tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken, attempt: makeAttempt(task), next };
}

export function retentionCases(store: CurrentStore): void {
  it('keeps the expiresAt a final outcome brings, and none for a retry', async () => {
    const retried = await claimed(store(), makeTask());
    const done = await claimed(store(), makeTask());
    const expiresAt = T0 + 7 * 86_400_000;
    await store().completeAttempts(
      [completion(retried, retryOutcome(retried, T0 + 2_000)), completion(done, { ...finalOutcome(done, 'SUCCEEDED'), expiresAt })],
      T0 + 50,
    );
    expect((await store().getTask('default', retried.taskId))?.expiresAt).toBeNull();
    expect((await store().getTask('default', done.taskId))?.expiresAt).toBe(expiresAt);
  });

  it('takes the expiresAt of the outcome a requested cancel applies, and the one cancelTask is given', async () => {
    const task = await claimed(store(), makeTask());
    await store().requestCancel(ref(task), T0 + 5);
    const cancelled = { ...finalOutcome(task, 'CANCELLED'), expiresAt: T0 + 3_000 };
    await store().completeAttempts([{ ...completion(task, retryOutcome(task, T0 + 2_000)), ifCancelRequested: cancelled }], T0 + 50);
    expect(await store().getTask('default', task.taskId)).toMatchObject({ status: 'CANCELLED', expiresAt: T0 + 3_000 });

    const pending = makeTask();
    await insertAll(store(), [pending]);
    const result = await store().cancelTask(ref(pending), T0 + 6, T0 + 9_000);
    expect(result).toMatchObject({ kind: 'applied', task: { status: 'CANCELLED', expiresAt: T0 + 9_000 } });
    expect((await store().getTask('default', pending.taskId))?.expiresAt).toBe(T0 + 9_000);
  });

  it('clears expiresAt on replay: a live task is never deleted', async () => {
    const dead = ended('EXHAUSTED', T0 + 1_000);
    await insertAllStored(store(), [dead]);
    const result = await store().replayTask(ref(dead), { expectedVersion: dead.version, runAttemptOffset: 1, runStartedAt: T0 + 100, nextAttemptAt: T0 + 100, updatedAt: T0 + 100 });
    expect(result).toMatchObject({ kind: 'applied', task: { status: 'PENDING', expiresAt: null } });
    expect(await store().purgeExpired(T0 + 5_000, 10)).toEqual([]);
    expect((await store().getTask('default', dead.taskId))?.status).toBe('PENDING');
  });

  it('deletes the tasks whose retention passed, at most limit a call, and nothing else', async () => {
    const first = ended('SUCCEEDED', T0 + 1_000);
    const second = ended('EXHAUSTED', T0 + 2_000, { deadLetterReason: 'max_attempts', bodyRef: 'default/big-body', body: null });
    const third = ended('CANCELLED', T0 + 3_000, { tenantId: 'tenant-b' });
    const later = ended('FAILED', T0 + 60_000);
    const kept = ended('SUCCEEDED', null);
    const live = makeTask();
    await insertAllStored(store(), [third, later, first, kept, live, second]);

    expect(await store().purgeExpired(T0 + 999, 10)).toEqual([]);
    // At most `limit` a call (which ones first is the store's: earliest first, per partition in Redis Cluster).
    const batches = [await store().purgeExpired(T0 + 5_000, 2), await store().purgeExpired(T0 + 5_000, 2)];
    expect(batches.map((b) => b.length)).toEqual([2, 1]);
    const byId = (a: { taskId: string }, b: { taskId: string }) => (a.taskId < b.taskId ? -1 : 1);
    expect(batches.flat().sort(byId)).toEqual(
      [
        { tenantId: 'default', taskId: first.taskId, status: 'SUCCEEDED', bodyRef: null },
        { tenantId: 'default', taskId: second.taskId, status: 'EXHAUSTED', bodyRef: 'default/big-body' },
        { tenantId: 'tenant-b', taskId: third.taskId, status: 'CANCELLED', bodyRef: null },
      ].sort(byId),
    );
    expect(await store().purgeExpired(T0 + 5_000, 2)).toEqual([]);

    for (const gone of [first, second, third]) expect(await store().getTask(gone.tenantId, gone.taskId)).toBeUndefined();
    for (const stays of [later, kept, live]) expect(await store().getTask(stays.tenantId, stays.taskId)).toEqual(stays);
    const listed = await store().listTasks({ tenantId: 'default', limit: 100 });
    expect(listed.items.map((t) => t.taskId).sort()).toEqual([later.taskId, kept.taskId, live.taskId].sort());
    expect((await store().listTasks({ tenantId: 'tenant-b', limit: 100 })).items).toEqual([]);
    expect(await store().admin.countByStatus()).toMatchObject({ SUCCEEDED: 1, EXHAUSTED: 0, CANCELLED: 0, FAILED: 1, PENDING: 1 });
  });

  it("deletes a task's attempt log with it, and frees its idempotency key for a new task", async () => {
    const task = await claimed(store(), makeTask({ idempotencyKey: 'order-42' }));
    await store().completeAttempts([completion(task, { ...finalOutcome(task, 'SUCCEEDED'), expiresAt: T0 + 1_000 })], T0 + 50);
    expect((await store().listAttempts('default', task.taskId, page)).items).toHaveLength(1);
    expect((await store().admin.getTaskByIdempotencyKey('default', 'order-42'))?.taskId).toBe(task.taskId);

    expect(await store().purgeExpired(T0 + 1_000, 10)).toHaveLength(1);
    expect((await store().listAttempts('default', task.taskId, page)).items).toEqual([]);
    expect(await store().admin.getTaskByIdempotencyKey('default', 'order-42')).toBeUndefined();

    // The same key after the retention: a new task, not the old one's duplicate.
    const again = makeTask({ idempotencyKey: 'order-42', createdAt: T0 + 2_000, updatedAt: T0 + 2_000, nextAttemptAt: T0 + 2_000 });
    expect((await store().insertTasks([again]))[0]).toEqual({ kind: 'inserted', task: again });
    expect((await store().admin.getTaskByIdempotencyKey('default', 'order-42'))?.taskId).toBe(again.taskId);
  });

  it('purges a large batch in one call, leaving what is not expired yet', async () => {
    const expired = Array.from({ length: 120 }, (_, i) => ended('SUCCEEDED', T0 + i));
    const notYet = Array.from({ length: 30 }, (_, i) => ended('SUCCEEDED', T0 + 10_000 + i));
    await insertAllStored(store(), [...notYet, ...expired]);
    const purged = await store().purgeExpired(T0 + 5_000, 500);
    expect(purged.map((p) => p.taskId).sort()).toEqual(expired.map((t) => t.taskId).sort());
    expect(await store().admin.countByStatus()).toMatchObject({ SUCCEEDED: 30 });
    expect((await store().purgeExpired(T0 + 20_000, 500)).map((p) => p.taskId).sort()).toEqual(notYet.map((t) => t.taskId).sort());
  });
}
